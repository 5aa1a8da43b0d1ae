#!/usr/bin/env bash
# Kept for runners that call it: the same as `bin/mechspec run` (options, exit codes and receipts: README), and
# `run-contracts.sh --bench [options]` is `bin/mechspec bench [options]` (src/site/markdown/gpu.md, "Decode benchmark").
bin="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bin/mechspec"
if [ "${1:-}" = --bench ]; then
    shift
    exec "$bin" bench "$@"
fi
exec "$bin" run "$@"

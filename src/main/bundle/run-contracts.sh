#!/usr/bin/env bash
# Kept for runners that call it: the same as `bin/mechspec run` (options, exit codes and receipts: README).
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bin/mechspec" run "$@"

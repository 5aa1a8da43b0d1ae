#!/usr/bin/env bash
# Runs the mechspec contracts from the unpacked GPU bundle: needs only an NVIDIA driver (or nothing, with
# --backend cpu) -- no JDK, Maven or network. Options are those of `mechspec run`:
#   [--paper P]... [--seeds 42,43] [--backend auto|cpu|cuda|cuda-emulated] [--out DIR] [--data-dir DIR]
# Relative --out and --data-dir are taken from the directory you call it from. Exit codes: 0 every contract
# passed, 1 a contract failed or an artifact was not written, 2 bad options or --backend cuda without a usable GPU.
# On a real GPU the run also writes DIR/gpu-receipt.json (README, "Receipts").
# MECHSPEC_JAVA_OPTS replaces the default JVM options (-Xmx4g).
set -u
bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

absolute() {
    case "$1" in
        /*) printf '%s' "$1" ;;
        *) printf '%s/%s' "$PWD" "$1" ;;
    esac
}

args=()
out_given=no
while [ $# -gt 0 ]; do
    case "$1" in
        --out | --out=*) out_given=yes ;;
    esac
    case "$1" in
        --out | --data-dir)
            args+=("$1")
            shift
            if [ $# -gt 0 ]; then
                args+=("$(absolute "$1")")
                shift
            fi
            ;;
        --out=* | --data-dir=*) args+=("${1%%=*}=$(absolute "${1#*=}")"); shift ;;
        *) args+=("$1"); shift ;;
    esac
done
if [ "$out_given" = no ]; then
    args+=(--out "$PWD/mechspec-out") # mechspec run's default, in the caller's folder
fi

# JCuda unpacks its driver wrapper into java.io.tmpdir: a private writable folder, removed afterwards.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mechspec.XXXXXX") || {
    echo "run-contracts.sh: cannot create a temporary folder under ${TMPDIR:-/tmp}; set TMPDIR to a writable folder" >&2
    exit 2
}
trap 'rm -rf "$tmp"' EXIT

# The contracts run in the bundle folder, as Maven runs them in the project root: fixtures/ is found the same way.
cd "$bundle" || exit 2
# shellcheck disable=SC2086 # MECHSPEC_JAVA_OPTS is a list of options
runtime/bin/java ${MECHSPEC_JAVA_OPTS:--Xmx4g} \
    -Djava.io.tmpdir="$tmp" \
    -Dslf4j.internal.verbosity=ERROR \
    -Dmechspec.fixtures.dir="$bundle/fixtures" \
    -cp "$bundle/lib/*" org.mechspec.cli.Main run ${args[@]+"${args[@]}"}

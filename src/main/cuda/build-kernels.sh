#!/usr/bin/env bash
# Compiles every .cu of SRC_DIR into OUT_DIR/<name>.fatbin and writes OUT_DIR/RECORD (default kernels.json: nvcc's
# version, the flags, each image's SHA-256). Called by the Maven build; rebuilds only what is out of date.
# usage: build-kernels.sh OUT_DIR SRC_DIR [NVCC [RECORD]]
#
# Images: SASS for every data-centre and desktop architecture since Ampere that this nvcc supports, plus PTX of
# the oldest one, so a newer GPU JIT-compiles it. sm_86 and sm_89 are compiled from compute_80, whose features are
# all the kernels use: one front-end pass (cicc) for the three Ampere/Ada images instead of three. Uncompressed
# (-no-compress), so that the emulated driver (src/test/emulator) can read the PTX entries out of the same file.
#
# FMA contraction stays on (nvcc's default, --fmad=true): only plain `a * b + c` in the attention accumulations
# (attention.cu, pnmix.cu packed_attention_*, pnmix_decode.cu, oal.cu) may contract. Those are judged by the FlashAttention rule,
# whose tolerance bounds every rounding order, and a fused multiply-add rounds once where the CPU twin rounds
# twice, so it stays inside the bound. The bit-exact kernels never contract: rounding.cu has no multiply-add,
# foldbias.cu, pnmix.cu's quantizers and its dequantizers use __dmul_rn/__dadd_rn. The emulator compiles the
# kernels with the same contraction (src/test/emulator/README.md), so the emulated contracts show this holds.
set -euo pipefail

out=$1
src=$2
nvcc=${3:-}
record=${4:-kernels.json}

if [ -z "$nvcc" ]; then
    for candidate in "$(command -v nvcc || true)" /usr/local/cuda/bin/nvcc /usr/local/bin/nvcc /opt/cuda/bin/nvcc; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then
            nvcc=$candidate
            break
        fi
    done
fi
if [ -z "$nvcc" ]; then
    echo "[mechspec] WARNING: nvcc not found (PATH, /usr/local/cuda/bin, /usr/local/bin, /opt/cuda/bin; or -Dnvcc=PATH):" \
         "CUDA kernels of $src not built; CUDA contracts will say so"
    exit 0
fi

archs=""
supported=$("$nvcc" --list-gpu-code)
for sm in sm_80 sm_86 sm_89 sm_90 sm_100 sm_120; do
    if grep -qx "$sm" <<<"$supported"; then
        case $sm in
            sm_86 | sm_89) virtual=compute_80 ;;
            *) virtual=compute_${sm#sm_} ;;
        esac
        archs="$archs -gencode arch=$virtual,code=$sm"
    fi
done
flags="-fatbin -no-compress -lineinfo -std=c++17 --threads 0$archs -gencode arch=compute_80,code=compute_80"

mkdir -p "$out"
shopt -s nullglob
headers=("$src"/*.cuh)
for cu in "$src"/*.cu; do
    name=$(basename "$cu" .cu)
    target="$out/$name.fatbin"
    stale=0
    for input in "$cu" "${headers[@]}" "$0"; do
        [ "$target" -nt "$input" ] || stale=1
    done
    if [ $stale = 1 ]; then
        echo "[mechspec] nvcc $name.cu"
        # shellcheck disable=SC2086
        "$nvcc" $flags -o "$target.tmp" "$cu"
        mv "$target.tmp" "$target"
    fi
done

version=$("$nvcc" --version | grep -i 'release' | sed 's/"/\\"/g')
{
    printf '{\n  "nvcc": "%s",\n  "nvcc_path": "%s",\n  "flags": "%s",\n  "images": {' "$version" "$nvcc" "$flags"
    sep=""
    for fatbin in "$out"/*.fatbin; do
        printf '%s\n    "%s": "%s"' "$sep" "$(basename "$fatbin" .fatbin)" "$(sha256sum "$fatbin" | cut -d' ' -f1)"
        sep=","
    done
    printf '\n  }\n}\n'
} > "$out/$record.tmp"
mv "$out/$record.tmp" "$out/$record"

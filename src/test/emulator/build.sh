#!/usr/bin/env bash
# Builds the CPU CUDA emulator: OUT_DIR/libcuda.so.1, a stand-in for the NVIDIA driver that runs every *.cu
# kernel under the given folders, compiled for the host with g++ (no nvcc needed).
#
#   build.sh OUT_DIR CU_DIR...
#
# Does nothing when the library is newer than every input (.cu, .cuh, emulator sources, this script).
# Uses ${CXX:-g++}. Intermediate files go to OUT_DIR/emu-build. x86-64 only (the fiber switch is assembly).
#
# Kernels are compiled with multiply-add contraction, as nvcc compiles them, which needs the host's FMA
# instructions. On a CPU without them (no "fma" flag in /proc/cpuinfo; EMU_BUILD_CPUINFO names another file, for
# the test of this case) the build goes on without contraction and says so here and in every process's first
# launch: the CPU suite still builds there, but such an emulator does not show what contraction does.
set -euo pipefail

fail() {
    echo "build.sh: $*" >&2
    exit 1
}
trap 'echo "build.sh: unexpected failure at line $LINENO: $BASH_COMMAND" >&2' ERR

[[ $# -ge 2 ]] || fail "usage: build.sh OUT_DIR CU_DIR..."
OUT=$1
shift
EMU=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CXX=${CXX:-g++}
LIB=$OUT/libcuda.so.1
WORK=$OUT/emu-build
command -v "$CXX" >/dev/null || fail "compiler '$CXX' not found"
command -v objcopy >/dev/null || fail "objcopy (binutils) not found"
[[ $(uname -m) == x86_64 ]] || fail "the emulator runs on x86-64 only (its fiber switch is x86-64 assembly); this is $(uname -m)"

# nvcc contracts a * b + c into one FMA by default (--fmad=true); g++ does the same with -ffp-contract=fast on a
# target with FMA instructions. Explicitly rounded operations (__dmul_rn, __dadd_rn, ...) stay unfused (cuda_emu.h).
CPUINFO=${EMU_BUILD_CPUINFO:-/proc/cpuinfo}
if grep -qw fma "$CPUINFO"; then
    CONTRACTION=(-ffp-contract=fast -mfma)
    CONTRACTED=1
else
    echo "build.sh: NOTE: this CPU has no FMA instructions (no 'fma' flag in $CPUINFO): kernels are compiled" \
        "without nvcc's multiply-add contraction, so this emulator cannot show what contraction does" >&2
    CONTRACTION=(-ffp-contract=off)
    CONTRACTED=0
fi

# ---- inputs and the up-to-date check ----------------------------------------------------------------------

CU_FILES=()
HEADERS=()
for dir in "$@"; do
    [[ -d $dir ]] || fail "no such folder: $dir"
    dir=$(cd "$dir" && pwd)
    while IFS= read -r f; do CU_FILES+=("$f"); done < <(find "$dir" -name '*.cu' -type f | LC_ALL=C sort)
    while IFS= read -r f; do HEADERS+=("$f"); done < <(find "$dir" -name '*.cuh' -type f | LC_ALL=C sort)
done
[[ ${#CU_FILES[@]} -gt 0 ]] || fail "no .cu files under: $*"
RUNTIME_SOURCES=()
for f in "$EMU"/*.cpp "$EMU"/*.S; do
    [[ $(basename "$f") == smoke.cpp ]] || RUNTIME_SOURCES+=("$f")
done
INPUTS=("${CU_FILES[@]}" "${HEADERS[@]}" "${RUNTIME_SOURCES[@]}" "$EMU"/*.h "$EMU"/include/*.h "$EMU/build.sh"
    "$EMU/jcuda-driver-symbols.txt")
# The manifest also catches a .cu file that was removed or a different compiler.
MANIFEST=$(printf '%s\n' "$CXX" "${CONTRACTION[*]}" "${CU_FILES[@]}")
if [[ -f $LIB && -f $WORK/manifest && $(cat "$WORK/manifest") == "$MANIFEST" ]] &&
    [[ -z $(find "${INPUTS[@]}" -newer "$LIB" -print -quit) ]]; then
    exit 0
fi

rm -rf "$WORK"
mkdir -p "$WORK"

# ---- parallel jobs: each writes its log and exit status, checked by wait_jobs ----------------------------

MAX_JOBS=$(($(nproc 2>/dev/null || echo 2) + 1))
JOB_NAMES=()
declare -A JOB_WHAT
start_job() { # start_job NAME DESCRIPTION COMMAND...
    local name=$1
    JOB_WHAT[$name]=$2
    shift 2
    while [[ $(jobs -rp | wc -l) -ge $MAX_JOBS ]]; do wait -n 2>/dev/null || true; done
    {
        set +e
        (
            set -e
            "$@"
        ) >"$WORK/$name.log" 2>&1
        echo $? >"$WORK/$name.rc"
    } &
    JOB_NAMES+=("$name")
}
wait_jobs() {
    wait
    local name
    for name in "${JOB_NAMES[@]}"; do
        if [[ $(cat "$WORK/$name.rc" 2>/dev/null || echo 1) != 0 ]]; then
            cat "$WORK/$name.log" >&2
            fail "${JOB_WHAT[$name]} failed (log: $WORK/$name.log)"
        fi
    done
    JOB_NAMES=()
}

RUNTIME_FLAGS=(-std=c++17 -O2 -fPIC -fvisibility=hidden -pthread -Wall -Wextra -g1 -DEMU_KERNELS_CONTRACTED=$CONTRACTED)
# Kernels: IEEE operations with nvcc's multiply-add contraction (no other fast-math liberties), every memory
# access of the kernel code routed through the runtime's __asan_* hooks and every typed dereference checked for its
# type's alignment (-fsanitize=alignment; see access.cpp). __shared__ arrays are
# thread_locals without dynamic initialisation, so no TLS init wrappers are needed (-fno-extern-tls-init).
KERNEL_FLAGS=(-std=c++17 -O2 -fPIC -fvisibility=hidden "${CONTRACTION[@]}" -fno-fast-math -fexceptions -g1
    -fno-extern-tls-init
    -fsanitize=kernel-address -fsanitize=alignment -fsanitize-recover=alignment
    --param asan-instrumentation-with-call-threshold=0
    --param asan-stack=0 --param asan-globals=0
    -I"$EMU/include" -iquote "$EMU" -include "$EMU/cuda_emu.h")

# ---- one job per kernel file: find its kernels, generate the registering unit, compile --------------------

# The device math functions with a modelled GPU error (math.cpp): the kernels' calls go to emu_math_NAME.
MODELLED_MATH=(exp expf exp2 exp2f expm1 expm1f log logf log2 log2f log1p log1pf pow powf tanh tanhf)
MATH_RENAMES=()
for f in "${MODELLED_MATH[@]}"; do MATH_RENAMES+=(--redefine-sym "$f=emu_math_$f"); done

build_kernel_file() { # build_kernel_file ID SOURCE
    local id=$1 src=$2 pre="$WORK/$1"
    # Pass 1: preprocess with markers for __global__ and __shared__ (macros such as PACKED_ATTENTION_KERNEL
    # are expanded by then), and read the kernel names and extern shared array names off the text.
    "$CXX" -E -P -DEMU_SCAN "${KERNEL_FLAGS[@]}" -x c++ "$src" -o "$pre.i"
    tr -s '[:space:]' ' ' <"$pre.i" >"$pre.flat"
    { grep -oE 'EMU_GLOBAL_MARKER [^;{}()]*[A-Za-z_][A-Za-z0-9_]* ?\(' "$pre.flat" || true; } |
        sed -E 's/^.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*) ?\($/\1/' | LC_ALL=C sort -u >"$pre.kernels"
    { grep -oE 'extern EMU_SHARED_MARKER [^;]*[A-Za-z_][A-Za-z0-9_]* ?\[ ?\]' "$pre.flat" || true; } |
        sed -E 's/^.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*) ?\[ ?\]$/\1/' | LC_ALL=C sort -u >"$pre.shared"
    {
        echo "// Generated by build.sh from $src: the file itself, then the registration of its kernels."
        echo "#include \"$src\""
        echo "#include \"emu_register.h\""
        while IFS= read -r k; do echo "EMU_REGISTER_KERNEL($k, \"$src\")"; done <"$pre.kernels"
    } >"$pre.cpp"
    "$CXX" "${KERNEL_FLAGS[@]}" -c "$pre.cpp" -o "$pre.raw"
    # Each .cu is its own module on a GPU: make its plain global definitions local so equal names in two
    # files do not clash (COMDAT template/inline copies stay weak and merge as usual). The kernels' own
    # memcpy/memmove/memset calls are not instrumented: send them to the checking versions; a failed assert()
    # becomes the launch's CUDA_ERROR_ASSERT instead of aborting the process; math functions go to math.cpp.
    nm --defined-only "$pre.raw" | awk '$2 ~ /^[TDBR]$/ {print $3}' >"$pre.localize"
    objcopy --localize-symbols="$pre.localize" \
        --redefine-sym memcpy=emu_kernel_memcpy --redefine-sym memmove=emu_kernel_memmove \
        --redefine-sym memset=emu_kernel_memset --redefine-sym __assert_fail=emu_kernel_assert_fail \
        "${MATH_RENAMES[@]}" "$pre.raw" "$pre.o"
    nm --undefined-only "$pre.o" | awk '{print $2}' >"$pre.undefined"
}

# One line for each kernel file (and thing in it) the emulator cannot run as a GPU would; then the build fails.
refuse_unmodelled() {
    local flat name undefined src refused=0
    for flat in "$WORK"/k*.flat; do
        src=$(head -1 "${flat%.flat}.cpp" | sed -E 's/^.* from (.*): the file itself.*$/\1/')
        undefined=${flat%.flat}.undefined
        # Static __shared__ arrays are per-worker thread_locals: a block would see the previous block's values,
        # where a GPU's are undefined. Dynamic shared memory is poisoned for every block instead.
        while IFS= read -r name; do
            echo "build.sh: $src: static __shared__ array '$name' is not supported by the emulator (a block would see" \
                "the previous block's values): use extern __shared__ (dynamic shared memory, poisoned for every block)" >&2
            refused=1
        done < <({ grep -oE '(extern )?EMU_SHARED_MARKER [^;]*;' "$flat" || true; } | { grep -v '^extern ' || true; } |
            sed -E 's/ ?(\[|=|;).*$//; s/^.* //')
        # A modelled function still called by its own name was not renamed (say, a new alias GCC emitted).
        while IFS= read -r name; do
            echo "build.sh: $src: the call of $name was not redirected to the emulator's math.cpp" >&2
            refused=1
        done < <(grep -xE "($(IFS='|'; echo "${MODELLED_MATH[*]}"))" "$undefined" || true)
        # Library math whose GPU error the emulator does not model (exact ones such as sqrt, rint, fmin are fine).
        while IFS= read -r name; do
            echo "build.sh: $src: the kernels call $name, whose GPU error the emulator does not model: add it to" \
                "src/test/emulator/math.cpp and MODELLED_MATH in build.sh" >&2
            refused=1
        done < <(grep -xE "$UNMODELLED_MATH" "$undefined" || true)
    done
    [[ $refused == 0 ]] || exit 1
}
UNMODELLED_MATH='(a?(sin|cos|tan)h?|atan2|cbrt|erfc?|erfc?inv|exp10|[lt]gamma|hypot|log10|sincos|(sin|cos)pi|[jy][01n]|rsqrt|rcbrt|norm[a-z0-9]*)[fl]?|(exp|exp2|expm1|log|log2|log1p|pow|tanh)l|__[a-z0-9_]+_finite|_ZGV.*'


i=0
for src in "${CU_FILES[@]}"; do
    id="k$i-$(basename "$src" .cu)"
    start_job "$id" "compiling $src for the emulator" build_kernel_file "$id" "$src"
    i=$((i + 1))
done
for src in "${RUNTIME_SOURCES[@]}"; do
    name=$(basename "$src")
    start_job "rt-$name" "compiling the emulator's $name" "$CXX" "${RUNTIME_FLAGS[@]}" -c "$src" -o "$WORK/rt-${name%.*}.o"
done
wait_jobs

refuse_unmodelled

# A kernel name may exist once (the driver looks kernels up by name across all of them).
dups=$(cat "$WORK"/k*.kernels | LC_ALL=C sort | uniq -d | tr '\n' ' ')
[[ -z $dups ]] || fail "kernel names defined in more than one .cu file: $dups"

# ---- generated units: dynamic shared memory, stubs for the driver entry points not emulated ------------

mapfile -t SHARED < <(cat "$WORK"/k*.shared | LC_ALL=C sort -u)
{
    echo "// Generated by build.sh: the dynamic shared memory of a block (extern __shared__ T NAME[])."
    echo "// Every name aliases one per-thread array, as all of a CUDA block's extern shared arrays start at the"
    echo "// same address; one block runs entirely on one worker thread."
    echo "#include <stddef.h>"
    echo "#define EMU_MAX_DYNAMIC_SHARED 232448"
    first=${SHARED[0]:-emu_dynamic_shared_default}
    echo "alignas(16) thread_local unsigned char $first[EMU_MAX_DYNAMIC_SHARED];"
    for name in "${SHARED[@]:1}"; do
        echo "extern thread_local unsigned char $name[EMU_MAX_DYNAMIC_SHARED] __attribute__((alias(\"$first\")));"
    done
    echo "extern \"C\" void emu_dynamic_shared_area(void** base, size_t* capacity) {"
    echo "    *base = $first;"
    echo "    *capacity = sizeof $first;"
    echo "}"
} >"$WORK/gen-shared.cpp"

nm --defined-only "$WORK"/rt-*.o | awk '$2 == "T" && $3 ~ /^cu/ {print $3}' | LC_ALL=C sort -u >"$WORK/implemented.txt"
LC_ALL=C sort -u "$EMU/jcuda-driver-symbols.txt" >"$WORK/imported.txt"
{
    echo "// Generated by build.sh: JCuda-imported driver entry points the emulator does not implement."
    echo "#include \"stub.h\""
    LC_ALL=C comm -23 "$WORK/imported.txt" "$WORK/implemented.txt" | sed 's/.*/EMU_STUB(&)/'
} >"$WORK/gen-stubs.cpp"

start_job gen-shared "compiling the generated $WORK/gen-shared.cpp" \
    "$CXX" "${RUNTIME_FLAGS[@]}" -c "$WORK/gen-shared.cpp" -o "$WORK/gen-shared.o"
start_job gen-stubs "compiling the generated $WORK/gen-stubs.cpp" \
    "$CXX" "${RUNTIME_FLAGS[@]}" -iquote "$EMU" -c "$WORK/gen-stubs.cpp" -o "$WORK/gen-stubs.o"
wait_jobs

# ---- link: export only the cu* API, without symbol versions -------------------------------------------

echo "{ global: cu*; local: *; };" >"$WORK/exports.map"
if ! "$CXX" -shared -Wl,-soname,libcuda.so.1 -Wl,-z,defs -Wl,--version-script="$WORK/exports.map" -pthread \
    -o "$LIB.tmp" "$WORK"/*.o -ldl >"$WORK/link.log" 2>&1; then
    cat "$WORK/link.log" >&2
    fail "linking $LIB failed (log: $WORK/link.log)"
fi
missing=$(nm -D --defined-only "$LIB.tmp" | awk '{print $3}' | LC_ALL=C sort -u |
    LC_ALL=C comm -13 - "$WORK/imported.txt" | tr '\n' ' ')
[[ -z $missing ]] || fail "driver entry points missing from the library: $missing"
mv -f "$LIB.tmp" "$LIB"
echo "$MANIFEST" >"$WORK/manifest"

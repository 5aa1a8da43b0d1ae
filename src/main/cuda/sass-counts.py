#!/usr/bin/env python3
"""Counts the SASS instructions of the split-K decode kernels (pnmix_decode.cu) per loop, for the decode model.

Writes fixtures/sass/pnmix_decode.sm_90.json, which DecodeIssueModel (src/test/java/org/mechspec/pnmix) reads;
SassFixtureTest fails when the SHA-256 of pnmix_decode.cu or of a file of its folder it includes (group_tiles.cuh,
warp_ops.cuh, ...) differs from the one recorded here (sources_sha256). Run from the repository root:

    NVDISASM=/path/to/nvdisasm python3 src/main/cuda/sass-counts.py      (or --nvdisasm PATH)

Needs nvcc (compiles for sm_90 with the bundle's flags: -std=c++17 -lineinfo, nvcc's default -O3) and nvdisasm.
A CUDA toolkit's nvdisasm works. Without one: Debian bookworm's non-free package nvidia-cuda-toolkit (11.8) ships
/usr/bin/nvdisasm; `apt-get download nvidia-cuda-toolkit` and `dpkg-deb -x` it into a scratch folder (outside
the repository). nvdisasm 11.8 predates the sm_90 cubin header nvcc 12/13 writes, so sass_listing.py (beside this
script: the disassembly and its control-flow graph) disassembles a copy with the header patched (ELF OSABI 51, ABI
version 7, e_flags 0x5a055a); the instructions are untouched. A few opcodes newer than 11.8 (VIADD, VIMNMX,
VIADDMNMX: integer adds and min/max) print as blanks; they are named there
from the opcode field of their encoding (UNKNOWN_OPCODES).

What is counted. Per kernel, and apart per function not inlined (merge_if_last, the division slow paths: they sit
in their caller's section, reported as "kernel:function"), the control-flow graph of the disassembly: basic blocks, dominators, natural loops
(a back edge is a branch to a block that dominates it). Per loop, the instructions of its body less those of nested
loops ("own"), and less two kinds of block (line_sets): cold, code reached only through BRA.DIV (the fallback when
a warp is diverged at a shuffle; the kernels shuffle in converged code) or only on paths the bench configuration
never takes (packed values one code a channel; fp16 rows read 2 bytes at a time); and rare, the online softmax's
rescale side (a key whose score beats the running max) and the body of any if marked "// rare:" in the source (the
packed kernel's window max over the warp, reduced only where a score rises above the running max). What stays counts once per iteration: both sides of any
other branch inside a loop count (a warp whose lanes disagree issues both), so "own" is an upper bound on one
iteration's issued warp instructions, by at most its "conditional" part (blocks that do not dominate the back edge).

Which loop is which: a SASS loop is named by the source line its back edge's branch comes from (SOURCE_LOOPS, found
by the line's text). Keys of one KV head per iteration, fp32 (HEADS_F32 = 4 query heads a pass, VALUE_KEYS = 8),
at the bench's layer shape (d = 128: R = 16 lanes a key, P = 2 keys a warp) and pn-mix shape (d = 32: R = 4, P = 8):
  packed_decode_chunk_f32_b2 (the fp32 packed kernel for 2-bit values; _b1, _b4 and packed_decode_chunk_f32 are
    counted, not modelled), in a quantized group's window of one or two 32-token blocks, on tensor cores
    (key_tiles.cuh and group_tiles.cuh, group_pair_window; the bench's configuration: d a power of two from 16 to 128, a value group a
    whole head, 2-bit values):
    "key_pair_scores for step" (two 16-channel mma steps of the window's 64 keys, both blocks, an iteration:
      key_steps(d)/2 = d/32 rounded up iterations a window, of one block or two; the bench's groups, whose channel pairs share a width of at
      most 4 bits); cold: key_tile_scores (its loop "key_tile_scores for s", a block at a time, where a group's pairs
      do not: f32_packed_cold) and "group_pair_window for blocks", the loop that calls it;
    value_mtiles, no loop: its 8 m-tiles (16 channels each, both blocks' 4 k-steps) unrolled in the window loop, each
      a block from the guard before it (m < d/16) to the next, counted from value_mtiles' lines and its callees'
      (mtile_lines): the loop's "mma_blocks", of which a shape runs the first d/16 (the rest are taken off the
      window's own count);
    stage_key_weights (a function of its own: once a group and pass, its two channel loops d/32 (a channel a lane)
      and d/16·16/64 (a channel pair a lane) iterations);
    the window loop "decode_chunk for j0" itself (segment bookkeeping, the value words' copies, the window's softmax,
      the values' weights and sums) once per window (up to 64 keys), less its m-tiles (above), less its block that
      calls stage_key_weights (and what that block alone leads to: "per_group"), counted with the staging once a
      group. Cold in this kernel (f32_packed_cold): group_window (the paths where the values are not on tensor cores:
      its keys on tensor cores or a lane a key, the teams' values; not in the _bB kernels at all). Rare: the window's
      max over the warp and the state's rescale (pair_weights' "// rare:" if: only where a score rises above the
      running max), and the state
      into and out of value_tiles' layout (tile_state, untile_state: at most twice a stretch), but counted once a
      block where it runs at a pass's end ("per_block_once" adds the rare blocks outside the per-key loops).
  packed_decode_chunk_f64, in a quantized group's window:
    "key_scores for c" (a lane a key, four channels an iteration: d/4 iterations score the window's 32 keys; the
      one-channel loop for d not a multiple of 4 is cold);
    "group_window for i0" (values: VALUE_KEYS keys a team, P teams);
    "decode_chunk for j0" once per 32 keys, not counted per key.
  fp16_decode_chunk_f64: "rows_window for i" (P keys a warp an iteration; team_sum's five shuffles for each held
    head unrolled in it).
  fp16_decode_chunk_f32, its rows on tensor cores (rows_pair_window, row_tiles.cuh; d a multiple of 16, as the
    bench's; rows_window is cold there): "rows_stretch for j" (a window of up to two 32-row blocks an iteration,
    with its values' m-tiles "row_value_tiles for m", d/16 of them, their k-steps unrolled), "rows_pair_window for
    blocks" (a block scored an iteration) with "row_tile_scores for i" (its two m-tiles of 16 rows) and "row_tile_scores for s" (d/16 steps an
    m-tile); stage_row_weights (a function of its own) once a block and pass, by warp 0; "decode_chunk for j0" once a
    warp's stretch (an fp16 cache is one segment).
  merge_if_last (a function of its own, not inlined: the last chunk block of a KV head calls it to merge the
    head's chunks; one warp a query head; one copy per CPL, the output channels a lane: 1, 2, 4 or 8, the fewest with
    32 CPL >= d): "merge for j" (U chunks of one query head: each one's weight by one shuffle, CPL channels a lane;
    ptxas unrolls it, so chunks per iteration = its SHFL count; no loop where U = 32), "merge tail for j" (the last
    group's U past its whole U, loads predicated; where U = 32 every group's one iteration, inside for k0), "merge max
    for k" and "merge denominator for k" (32 chunks an iteration), "merge for k0" (32 chunks), "merge_if_last for h"
    (a head).
per_key (at the end of the JSON) works out warp instructions per (key, KV head) from these, in full windows, and for
fp32 ("walk") the counts per window, per group staged and per rows iteration that
DecodeIssueModel adds up over the windows a chunk really takes.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sass_listing import (CLASSES, NVCC_FLAGS, census, cfg, compile_cubin, disassemble, dominates,  # noqa: E402
                          dominators, patch_header)

SOURCE = "src/main/cuda/pnmix_decode.cu"
LOCAL_FILES = set()   # the basenames of local_sources(): set in main
OUTPUT = "fixtures/sass/pnmix_decode.sm_90.json"
# Source lines are found by their text (so an edit above them, or a move to another of the kernel's files, moves nothing
# here): each entry is the line that starts a stretch, found in exactly one of the kernel's files (texts: its base name
# -> its text), and the text of the stretch's last line (None: that line alone), or a count of lines. A line set is a
# dict from a file's base name to its line numbers.
def lines_of(texts, first, last):
    """{file: 1-based line numbers} from the one line containing `first` (in whichever of texts holds it) through the
    next line containing `last` (or `last` lines when it is a number)."""
    hits = [(f, i) for f, text in texts.items() for i, l in enumerate(text.split("\n")) if first in l]
    if len(hits) != 1:
        raise SystemExit(f"{first!r}: {len(hits)} lines match; update sass-counts.py to the kernel")
    f, i = hits[0]
    lines = texts[f].split("\n")
    if isinstance(last, int):
        return {f: set(range(i + 1, i + 1 + last))}
    j = next(k for k in range(i, len(lines)) if last in lines[k])
    return {f: set(range(i + 1, j + 2))}


def union(*line_sets):
    out = {}
    for ls in line_sets:
        for f, lines in ls.items():
            out[f] = out.get(f, set()) | lines
    return out


def line_sets(texts):
    """COLD: code the bench configuration never runs (packed values one code a channel: value_codes, get_code,
    Online::accumulate and its call; fp16 rows read 2 bytes at a time in fp16_slice; the query slice read a channel
    at a time where d is not a multiple of 8, query_slice). RARE: the online
    softmax's rescale side (a key whose score exceeds the running max, or a window whose max does: a few a chunk once
    the max has settled, about ln n of n for scores in random order), so not counted per key. RARE_BRANCHES: the
    lines of ifs marked "// rare:", whose bodies are rare (analyse: the branch's successor that is not the join)."""
    cold = union(lines_of(texts, "// For values that come one channel at a time (the slow path)", "// Merges the state"),
                 lines_of(texts, "__device__ __forceinline__ void value_codes(", "// An fp16 cache"),
                 lines_of(texts, "const unsigned char* p = src + 2 * (row * channels", "return x;"),
                 lines_of(texts, "if (valid && !a.wordPath) {", 4),
                 lines_of(texts, "} else {   // d not a multiple of 4: one channel at a time", 8),
                 lines_of(texts, "for (int k = 0; k < VEC; k++) q[h][k] = c0 + k < d ? sQ[(c0 + k) * HB + h] : (T) 0;", 1),
                 lines_of(texts, "int get_code(", "return (int)"))
    rare, rare_branches = {}, {}
    for f, text in texts.items():
        lines = text.split("\n")
        for i, l in enumerate(lines):
            if re.search(r"\bif \(.*\{\s*// rare:", l):
                rare_branches = union(rare_branches, {f: {i + 1}})
            if "if (s[h] > m[h]) {" in l:   # through the line before its "} else {"
                j = next(k for k in range(i + 1, len(lines)) if "} else {" in lines[k])
                rare = union(rare, {f: set(range(i + 2, j + 1))})
            if "if (rises_to(wm)) {" in l:   # raise_to's rescale (raise_tiles' is in the vote's rare body): through the line before its closing brace
                indent = l[:len(l) - len(l.lstrip())]
                j = next(k for k in range(i + 1, len(lines)) if lines[k] == indent + "}")
                rare = union(rare, {f: set(range(i + 2, j + 1))})
    # what the rescales above call: a head's max raised (its lines are its own where inlined); the state into and out
    # of value_tiles' layout: at most twice a warp's stretch
    rare = union(rare, lines_of(texts, "__device__ __forceinline__ T raise_head(int h, T s) {", "return alpha;"),
                 lines_of(texts, "__device__ void tile_state(", "__syncwarp();   // every lane's reads of sO"),
                 lines_of(texts, "__device__ void untile_state(", "__syncwarp();   // every lane's reads of sO"))
    return cold, rare, rare_branches


def f32_packed_cold(texts):
    """COLD in the fp32 packed kernel only: the paths it takes where the tensor-core values do not apply, which the
    bench configuration never does (d = 128 and 32; a value group a whole head, 2-bit values): group_window (its keys
    on tensor cores, or a lane a key: key_scores, key_channel, where d is odd; the teams' values), which dominates its
    copy of key_tile_scores; group_pair_window takes the bench's. And key_tiles.cuh's key_tile_scores, which a group
    takes a block at a time where its channel pairs differ in width or exceed PAIR_MAX_BITS (the bench's 3- and 1-bit
    adjacent pairs take key_pair_scores, a window's two blocks at once)."""
    return union(lines_of(texts, "__device__ __forceinline__ void key_channel(", "for (int h = 0; h < HB; h++) s[h] += qc[h] * kx;"),
                 lines_of(texts, "__device__ __forceinline__ void key_scores(const Cache& K", "// The warp's window [j0, j0 + n) of quantized group"),
                 lines_of(texts, "__device__ __forceinline__ void group_window(const PackedRows& R",
                          "// A window of one or two blocks (lane τ holds block token τ's scores"),
                 lines_of(texts, "for (int i = 0; i < (nB > 0 ? 2 : 1); i++) key_tile_scores<HB>(K, blk + 32 * i", 1),
                 lines_of(texts, "__device__ __forceinline__ void key_tile_scores(const Cache& K", "put_scores<2>(acc, at, kt, lane);"))


def mtile_lines(texts):
    """value_mtiles' own lines and those of what it calls (the mma and the codes' mask): an m-tile block's count
    (kernel_report's mma_blocks) is its instructions from these lines, wherever ptxas puts the block's first
    instruction (m-tile 0's block starts at the branch join before it, with window code in it)."""
    return union(lines_of(texts, "__device__ __forceinline__ void value_mtiles(", "// A token's record"),
                 lines_of(texts, "__device__ __forceinline__ void mma_m16n8k16_f32_f16(", "#endif"),
                 lines_of(texts, "__device__ __forceinline__ unsigned paired_codes_to_half2(", 1))


def f32_fp16_cold(texts):
    """COLD in the fp32 fp16-cache kernel only: rows_window, which it takes where d is not a multiple of 16 (the bench's
    d is 128 and 32: rows_pair_window's tensor-core windows)."""
    return lines_of(texts, "__device__ __forceinline__ void rows_window(const Rows& R",
                    "// One channel of a key for the lane's token")


# The source loops: the text of the loop's first line, found in pnmix_decode.cu or one of the files it includes (a
# natural loop of the SASS is named by the file and line its back edge's branch comes from).
SOURCE_LOOPS = {
    "rows_window for i": "for (int i = 0; i < n; i += a.P) {",
    "rows_stretch for j": "for (int j = j0, n; j < end; j += n) {   // rows windows",
    "rows_pair_window for blocks": "for (int blk = 0; blk < (nB > 0 ? 2 : 1); blk++) {",
    "row_tile_scores for i": "for (int i = 0; i < 2; i++) {   // m-tile i: tokens 16i + 2g and 16i + 2g + 1",
    "row_tile_scores for s": "for (int s = 0; s < d; s += KEY_STEP, r0 += 8, r1 += 8, frag += KEY_STEP_WORDS(HB)) {",
    "row_value_tiles for m": "for (int m = 0; m < (d >> 4); m++, slice += 4) {",
    "key_scores for c": "for (int c = 0; c < d; c += 4, qc += 4 * HB) {",
    "group_pair_window for blocks": "for (int i = 0; i < (nB > 0 ? 2 : 1); i++) key_tile_scores<HB>(K, blk + 32 * i, d, 32 * i, kt, a.lane);",
    "key_tile_scores for s": "for (int s = 0; s < key_steps(d); s++, k.next<HB>()) {",
    "key_pair_scores for step": "for (int step = 0; step < key_steps(d); step += 2) {",
    "stage_key_weights for c (largest weight, zero sum)": "for (int c = lane; c < d; c += 32) {",
    "stage_key_weights for c (weights)": "for (int c = 2 * lane; c < padded; c += 64) {",
    "group_window for i0": "for (int i0 = 0; i0 < n; i0 += VK * a.P) {",
    "prologue while R": "while (VEC * a.R < d && a.R < 32) a.R <<= 1;",
    "decode_chunk for h0": "for (int h0 = 0; h0 < gq; h0 += HB) {",
    "decode_chunk query to shared": "for (int i = threadIdx.x; i < HB * d; i += blockDim.x) {",
    "decode_chunk for j0": "for (int j0 = wfrom, n; j0 < wto; j0 += n) {",
    "decode_chunk while seg": "while (j0 >= seg.end) seg = R.next(seg);",
    "decode_chunk team merge": "for (int o = a.R; o < 32; o <<= 1) st.merge_xor(o, hb);",
    "decode_chunk warp merge for h": "for (int h = 0; h < hb; h++) {",
    "decode_chunk write acc for c": "for (int c = threadIdx.x; c < d; c += blockDim.x) {",
    "merge max for k": "for (int k = lane; k < chunks; k += 32) {\n        T mk = m[k];\n        M =",
    "warp_butterfly shuffles": "for (int o = from; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(FULL, x, o));",
    "merge denominator for k": "for (int k = lane; k < chunks; k += 32) {\n        T mk = m[k];\n        denom",
    "merge for k0": "for (int k0 = 0; k0 < chunks; k0 += 32) {",
    "merge for j": "for (; j + U <= n; j += U, row += U * S) merge_group",
    "merge tail for j": "for (; j < n; j += U, row += U * S) merge_group<T, CPL, U, true>",
    "merge_if_last for h": "for (int h = threadIdx.x >> 5; h < gq; h += warps) {",
    "value_codes for k (cold)": "for (int k = 0; k < VEC; k++) {\n            if (VEC * a.r + k < d) {",
}


def local_sources(path=SOURCE):
    """The kernel's source and the files it includes from its own folder, recursively, in the order first included."""
    out = [path]
    for m in re.finditer(r'#include "([^"]+)"', open(path).read()):
        inc = os.path.join(os.path.dirname(path), m.group(1))
        for f in local_sources(inc):
            if f not in out:
                out.append(f)
    return out


def source_loop_lines(texts):
    """(file, line number) -> source loop name; texts: file name -> its text, each loop's line found in one of them."""
    out = {}
    for name, text in SOURCE_LOOPS.items():
        first = text.split("\n")[0]
        hits = []
        for f, src in texts.items():
            lines = src.split("\n")
            found = [i + 1 for i, l in enumerate(lines) if first in l]
            if "\n" in text:
                found = [h for h in found if text in "\n".join(lines[h - 1:h + text.count("\n")])]
            hits += [(f, h) for h in found]
        if len(hits) != 1:
            raise SystemExit(f"source loop {name!r}: {len(hits)} lines match; update sass-counts.py to the kernel")
        out[hits[0]] = name
    return out


def analyse(ins, cold_lines, rare_lines, rare_branches):
    blocks, succ, div_targets = cfg(ins)
    nb = len(blocks)
    idom, preds = dominators(nb, succ)
    reachable = set(idom)
    # Cold blocks: dominated by a BRA.DIV target, or by a block mostly from cold lines; rare: by one mostly from
    # rare lines (line_sets).
    def dominated_by(marked_lines, extra=(), single_entry=False):
        seeds = set(extra)
        for k, (s, e) in enumerate(blocks):
            lines = [(x["file"], x["line"]) for x in ins[s:e]]
            hits = sum(1 for f, l in lines if l in marked_lines.get(f, ()))
            # single_entry: not a join (its BSYNC carries the line before it, the branch's last)
            if hits * 2 > len(lines) and not (single_entry and len([p for p in preds[k] if p in reachable]) > 1):
                seeds.add(k)
        seeds &= reachable
        return {k for k in reachable if any(dominates(idom, sd, k) for sd in seeds)}

    cold = dominated_by(cold_lines, div_targets)
    # A rare if's body: the successor of its conditional branch that has no other predecessor (the other is the join).
    bodies = set()
    for k, (s, e) in enumerate(blocks):
        last = ins[e - 1]
        if k in reachable and last["name"].startswith("BRA") and last["pred"] and last["line"] in rare_branches.get(last["file"], ()):
            body = [v for v in succ[k] if len([p for p in preds[v] if p in reachable]) == 1]
            if len(body) != 1:
                raise SystemExit(f"the rare branch at {last['file']}:{last['line']} has {len(body)} single-entry successors; "
                                 "update sass-counts.py to the kernel")
            bodies.add(body[0])
    rare = dominated_by(rare_lines, bodies, single_entry=True) - cold
    # Once a group (the fp32 packed kernel): the block that calls stage_key_weights (its arguments worked out) and
    # what it alone leads to, run where a window enters a new group, not every window.
    calls = [k for k, (s, e) in enumerate(blocks)
             if any(x["name"].startswith("CALL") and "stage_key_weights" in x["txt"] for x in ins[s:e])]
    per_group = dominated_by({}, calls) - cold - rare
    # Natural loops, merged by header.
    loops = {}
    for u in reachable:
        for h in succ[u]:
            if h in reachable and dominates(idom, h, u):
                body = loops.setdefault(h, {"header": h, "latches": [], "blocks": {h}})
                body["latches"].append(u)
                work = [u]
                while work:
                    x = work.pop()
                    if x not in body["blocks"]:
                        body["blocks"].add(x)
                        work.extend(p for p in preds[x] if p in reachable)
    result = []
    for h, lp in loops.items():
        # The source loop: the kernel's own source line (pnmix_decode.cu or a file of its folder it includes) of the
        # hot latch's branch (or of its block's last such line).
        hot_latches = [u for u in lp["latches"] if u not in cold] or lp["latches"]
        latch = max(hot_latches, key=lambda u: blocks[u][0])
        s, e = blocks[latch]
        src = None
        for x in reversed(ins[s:e]):
            if x["file"] in LOCAL_FILES:
                src = (x["file"], x["line"])
                break
        lp["source_line"] = src
        lp["latch"] = latch
        result.append(lp)
    # nesting: a loop's parent is the smallest loop that strictly contains its header
    for lp in result:
        parents = [q for q in result if q is not lp and lp["header"] in q["blocks"] and lp["blocks"] < q["blocks"]]
        lp["parent"] = min(parents, key=lambda q: len(q["blocks"])) if parents else None
    for lp in result:
        nested = set()
        for q in result:
            if q["parent"] is lp:
                nested |= q["blocks"]
        lp["own_blocks"] = [k for k in lp["blocks"] if k not in nested and k not in cold and k not in rare and k not in per_group]
        lp["per_group_blocks"] = [k for k in lp["blocks"] if k not in nested and k in per_group]
        lp["rare_blocks"] = [k for k in lp["blocks"] if k not in nested and k in rare]
        # every iteration runs the blocks that dominate the latch; the rest of own is conditional
        lp["always_blocks"] = [k for k in lp["own_blocks"] if dominates(idom, k, lp["latch"])]
    return blocks, cold, rare, result


def kernel_report(name, ins, cold_lines, rare_lines, rare_branches, loop_names, mtiles):
    blocks, cold, rare, loops = analyse(ins, cold_lines, rare_lines, rare_branches)
    size = lambda ks: sum(blocks[k][1] - blocks[k][0] for k in ks)
    hot = [k for k in range(len(blocks)) if k not in cold and k not in rare]
    in_loops = set().union(*[lp["blocks"] for lp in loops]) if loops else set()
    out = {"instructions": len(ins), "hot_instructions": size(hot), "cold_instructions": size(cold),
           "rare_instructions": size(rare), "outside_loops": size(k for k in hot if k not in in_loops),
           "rare_outside_loops": size(k for k in rare if k not in in_loops),
           "outside_loops_by_class": census(ins, blocks, [k for k in hot if k not in in_loops]), "loops": []}
    for lp in sorted(loops, key=lambda q: ins[blocks[q["header"]][0]]["a"]):
        c = census(ins, blocks, lp["own_blocks"])
        parent = lp["parent"]
        out["loops"].append({
            "header": "%#x" % ins[blocks[lp["header"]][0]]["a"],
            "latch": "%#x" % ins[blocks[lp["latch"]][1] - 1]["a"],
            "parent": None if parent is None else "%#x" % ins[blocks[parent["header"]][0]]["a"],
            "source_line": None if lp["source_line"] is None else "%s:%d" % lp["source_line"],
            "source_loop": loop_names.get(lp["source_line"], "unmapped"),
            "own": c,
            "conditional": c["total"] - size(lp["always_blocks"]),
            "rare": size(lp["rare_blocks"]),
            "per_group": census(ins, blocks, lp["per_group_blocks"]),
            # its own blocks that hold mma, in address order, each its instructions from the m-tiles' lines (the
            # packed kernel's window: value_mtiles' m-tiles)
            "mma_blocks": [cb for cb in (census(ins, blocks, [k], mtiles) for k in sorted(lp["own_blocks"], key=lambda k: blocks[k][0]))
                           if cb["mma"] > 0],
        })
    return out


def find_loop(report, name):
    found = [lp for lp in report["loops"] if lp["source_loop"] == name]
    if not found:
        raise SystemExit(f"no SASS loop for {name!r}: the kernel changed; update sass-counts.py")
    return found[0]


def add(*parts):
    """Σ weight·census over (weight, census) pairs, per class."""
    out = {name: 0.0 for name in CLASSES + ["total"]}
    for w, c in parts:
        for name in out:
            out[name] += w * c[name]
    return {k: round(v, 2) for k, v in out.items()}


def per_key(reports):
    """Warp instructions issued per (key, KV head) in full windows of quantized groups (packed fp32: two 32-token
    blocks a window, keys and values a window, the window itself, and the group staging over the bench's 128-token
    groups; packed fp64: 32-key windows) or of rows (fp16, 32 keys), per block once, and the merge's per (chunk,
    query head) and per query head, from the loops' own counts and the source's trip counts (the module docstring).
    For fp32 "walk" gives the parts DecodeIssueModel adds up over the windows a chunk really takes (a window may
    be one block, or start inside one, and costs the same): per group window, per group staged, and rows windows."""
    result = {}
    for t in ("f32", "f64"):
        hb = 4 if t == "f32" else 1
        vk = 8 if t == "f32" else 4
        # fp32: the kernel for the bench's 2-bit values (a kernel a value code width, value_mtiles unrolled for it)
        packed_name = "packed_decode_chunk_f32_b2" if t == "f32" else "packed_decode_chunk_f64"
        packed = reports[packed_name]
        fp16 = reports["fp16_decode_chunk_" + t]
        # fp32: a quantized group's keys on tensor cores, two 16-channel steps of a window's 64 keys an iteration
        # (key_pair_scores, in group_pair_window; key_tile_scores, a block at a time, is cold, and so are
        # group_pair_window's block loop that calls it and group_window), with the group's weights staged once a
        # group and pass (stage_key_weights, a function of its own); fp64: a lane a key, four channels an iteration
        tensor = t == "f32"
        if tensor:
            hot = [lp for lp in packed["loops"] if lp["source_loop"] == "key_pair_scores for step" and lp["own"]["total"] > 0]
            if len(hot) != 1 or any(lp["own"]["total"] > 0 for lp in packed["loops"]
                                    if lp["source_loop"] in ("key_tile_scores for s", "group_pair_window for blocks")):
                raise SystemExit("key_pair_scores for step: expected one hot copy (group_pair_window's), key_tile_scores "
                                 "for s and group_pair_window for blocks cold; update sass-counts.py")
            channels = hot[0]["own"]
            if channels["mma"] != 8:
                raise SystemExit("key_pair_scores for step: expected two steps (8 mma) an iteration; update sass-counts.py")
        else:
            channels = find_loop(packed, "key_scores for c")["own"]
        # fp32 values: value_mtiles' 8 m-tiles unrolled in the window loop, a block each from the guard before it (m <
        # d/16) to the next (in order), counted from their lines only (mtile_lines: m-tile 0's block also holds window
        # code, which stays the window's), 4 mma (both blocks' k-steps) a block; a shape runs its d/16 first
        mtiles = find_loop(packed, "decode_chunk for j0")["mma_blocks"] if tensor else []
        if tensor and [b["mma"] for b in mtiles] != [4] * 8:
            raise SystemExit("decode_chunk for j0: expected value_mtiles' 8 m-tiles, a block of 4 mma each; update sass-counts.py")
        stage = None
        if tensor:
            stage = reports[next(n for n in reports if n.startswith(packed_name + ":_Z17stage_key_weights"))]
        values = None if tensor else find_loop(packed, "group_window for i0")["own"]
        window_packed = find_loop(packed, "decode_chunk for j0")["own"]
        if tensor:   # less the m-tiles (values, by shape)
            window_packed = add((1, window_packed), *((-1, b) for b in mtiles))
        # fp16 cache: fp64, rows_window (P keys an iteration); fp32, rows_pair_window on tensor cores (a window of up
        # to two 32-key blocks an iteration of "rows_stretch for j"; per block "rows_pair_window for blocks", its two
        # m-tiles "row_tile_scores for i" of d/16 steps "row_tile_scores for s"; the values' d/16 m-tiles "row_value_tiles
        # for m", each 2 or 4 k-steps unrolled), the query staged once a block and pass (by warp 0)
        rows = None if tensor else find_loop(fp16, "rows_window for i")["own"]
        window_fp16 = find_loop(fp16, "decode_chunk for j0")
        if tensor:
            row_loops = {name: find_loop(fp16, name)["own"] for name in (
                "rows_stretch for j", "rows_pair_window for blocks", "row_tile_scores for i", "row_tile_scores for s",
                "row_value_tiles for m")}
            fp16_stage = reports[next(n for n in reports if n.startswith("fp16_decode_chunk_f32:_Z17stage_row_weights"))]
        rows_packed = find_loop(packed, "rows_window for i")["own"]
        for shape, d, gq in (("layer-32q-8kv-128d", 128, 4), ("pn-mix-8q-2kv-32d", 32, 4)):
            r = 1
            while 8 * r < d and r < 32:
                r *= 2
            p = 32 // r
            passes = -(-gq // hb)   # a pass walks the window again for the next hb query heads
            n = 64 if tensor else 32   # keys a full window of a group
            value_iterations = n / (vk * p)   # of the unrolled value body per window (0.5: it leaves halfway)
            key_iterations = -(-d // 32) if tensor else d // 4   # per window (fp32: of 64 keys, two steps each; fp64: of 32)
            if tensor:
                key_part = add((passes * key_iterations / n, channels))
                values = add(*((1, b) for b in mtiles[:d // 16]))   # the window's d/16 m-tiles
                # a window of one block or two costs the same: both blocks' keys scored, the m-tiles' 4 k-steps
                per_window = add((1, window_packed), (key_iterations, channels), (1, values))
                value_part = add((passes / n, values))
            else:
                key_part = add((passes * key_iterations / n, channels))
                value_part = add((passes * value_iterations / n, values))
            group_tokens = 128   # the bench's groups (the pinned cache policy)
            if tensor:
                # once a group and pass: the window loop's block that calls it, and its own outside its loops, d/32
                # iterations of the largest-weight loop (a channel a lane) and key_steps(d)·16/64 of the weights loop (a
                # channel pair a lane), all held heads
                staging = add((1, stage["outside_loops_by_class"]), (1, find_loop(packed, "decode_chunk for j0")["per_group"]),
                              (-(-d // 32), find_loop(stage, "stage_key_weights for c (largest weight, zero sum)")["own"]),
                              (-(-(-(-d // 16) * 16) // 64), find_loop(stage, "stage_key_weights for c (weights)")["own"]))
                staging_part = add((passes / group_tokens, staging))
            else:
                staging_part = add()
            result[f"packed_{t}_{shape}"] = {
                "per_iteration": {("key_pair_scores for step" if tensor else "key_scores for c"):
                                      f"{n} keys per {key_iterations} iterations" + (" of two 16-channel steps" if tensor else ""),
                                  ("value_mtiles" if tensor else "group_window for i0"):
                                      f"{n} keys per {d // 16} of the window loop's 8 m-tile blocks" if tensor else
                                      f"{vk} x {p} = {vk * p} keys" + (
                                      "" if value_iterations >= 1 else f"; a 32-key window runs {value_iterations:g} of it"),
                                  "decode_chunk for j0": f"{n} keys"}
                                 | ({"stage_key_weights": f"once per {group_tokens}-token group"} if tensor else {}),
                "passes": passes,
                "key_phase": key_part, "value_phase": value_part, "window": add((passes / n, window_packed)),
                "group_staging": staging_part,
                "per_key_kv_head": add((1, key_part), (1, value_part), (passes / n, window_packed), (1, staging_part)),
            }
            if tensor:
                # a quantized group's window (one or two blocks: its keys and the m-tiles' 4 k-steps the same either
                # way), a group staged, both a pass; and the sink's and residual's rows windows (the window loop's own
                # counts both kinds: an upper bound) and their keys, P a rows_window iteration
                result[f"packed_{t}_{shape}"]["walk"] = {
                    "passes": passes, "group_window": per_window["total"],
                    "group_staged": staging["total"], "rows_window": window_packed["total"],
                    "rows_iteration": rows_packed["total"], "keys_per_rows_iteration": p,
                    "keys_per_group_window": n, "pairs": True,
                }
            if tensor:
                steps = d // 16   # key steps of a block's m-tile; the values' m-tiles
                row_block = add((1, row_loops["rows_pair_window for blocks"]), (2, row_loops["row_tile_scores for i"]),
                                (2 * steps, row_loops["row_tile_scores for s"]))
                # a window (its m-tiles' 4 k-steps unrolled: counted whole for a window of one block too)
                row_window = add((1, row_loops["rows_stretch for j"]), (steps, row_loops["row_value_tiles for m"]))
                # once a warp's stretch and pass, the window loop's iteration (one: an fp16 cache is one segment); once
                # a block and pass, the query's staging by warp 0 (as a group's, d/32 and d/16·16/64 iterations of its
                # loops; its call and barrier are in the pass loop, once a block)
                row_staged = add((1, fp16_stage["outside_loops_by_class"]),
                                 (-(-d // 32), find_loop(fp16_stage, "stage_key_weights for c (largest weight, zero sum)")["own"]),
                                 (-(-(-(-d // 16) * 16) // 64), find_loop(fp16_stage, "stage_key_weights for c (weights)")["own"]))
                result[f"fp16_{t}_{shape}"] = {
                    "per_iteration": {"rows_stretch for j": "64 keys (a window of two blocks)",
                                      "rows_pair_window for blocks": "32 keys",
                                      "row_tile_scores for i": "16 keys (2 a block)",
                                      "row_tile_scores for s": f"16 keys x 16 channels ({steps} an m-tile)",
                                      "row_value_tiles for m": f"64 keys x 16 channels ({steps} a window)",
                                      "decode_chunk for j0": "a warp's stretch",
                                      "stage_row_weights": "once a block and pass"},
                    "passes": passes,
                    "note": "per_key_kv_head: full windows of two blocks, without what a warp's stretch and a block "
                            "pay once (walk: rows_stretch, rows_staged)",
                    "per_key_kv_head": add((passes / 64, row_window), (2 * passes / 64, row_block)),
                    "walk": {"passes": passes, "rows_window": row_window["total"], "rows_block": row_block["total"],
                             "rows_stretch": window_fp16["own"]["total"], "rows_staged": row_staged["total"],
                             "keys_per_rows_window": 64},
                }
            else:
                result[f"fp16_{t}_{shape}"] = {
                    "per_iteration": {"rows_window for i": f"P = {p} keys",
                                      "decode_chunk for j0": "32 keys"},
                    "passes": passes,
                    "per_key_kv_head": add((passes / p, rows), (passes / 32, window_fp16["own"])),
                }
        # merge_if_last<float or double, CPL>, by their mangled names (_Z13merge_if_lastIfLi4EE...: T = float, CPL = 4)
        by_cpl = {}
        for cpl in (1, 2, 4, 8):
            prefix = "packed_decode_chunk_" + t + ":_Z13merge_if_lastI" + ("f" if t == "f32" else "d") + "Li" + str(cpl) + "EE"
            comb = reports[next(n for n in reports if n.startswith(prefix))]
            js = [lp for lp in comb["loops"] if lp["source_loop"] == "merge for j"]
            # the last group's tail where U < 32 (where U = 32 it is the group: for k0 holds it)
            tails = [lp for lp in comb["loops"] if lp["source_loop"] == "merge tail for j"] if js else []
            # ptxas unrolls a j iteration's chunks: one __shfl_sync (the chunk's weight; two SHFL for a double) a chunk;
            # where one iteration covers the 32 chunks, there is no j loop and for k0 holds it
            chunks_per_j = js[0]["own"]["shfl"] // (2 if t == "f64" else 1) if js else 32
            by_cpl[str(cpl)] = {
                "outside_loops": comb["outside_loops"],
                "per_head": find_loop(comb, "merge_if_last for h")["own"]["total"],
                "per_32_chunks": find_loop(comb, "merge for k0")["own"]["total"]
                                 + find_loop(comb, "merge max for k")["own"]["total"]
                                 + find_loop(comb, "merge denominator for k")["own"]["total"],
                "chunks_per_j_iteration": chunks_per_j,
                "per_j_iteration": js[0]["own"]["total"] if js else 0,
                "per_tail_iteration": tails[0]["own"]["total"] if tails else 0,
            }
        result[f"merge_{t}"] = {
            "note": "per query head (one warp of the merging block; a warp takes heads w, w + 4, ...), by CPL (output "
                    "channels a lane: the fewest of 1, 2, 4, 8 with 32 CPL >= d): outside_loops once per block, "
                    "per_head once a head, for k0 and the max and denominator loops once per 32 chunks, for j once per "
                    "chunks_per_j_iteration chunks (32 / chunks_per_j_iteration times per 32 chunks), for the tail "
                    "once where the last group's chunks are not a multiple of chunks_per_j_iteration (where that is "
                    "32, for k0 holds the group's one iteration)",
            "by_channels_a_lane": by_cpl,
        }
        for name in ("packed", "fp16"):
            k = reports[packed_name if name == "packed" else f"fp16_decode_chunk_{t}"]
            per_key_loops = {"key_scores for c", "key_tile_scores for s", "key_pair_scores for step", "group_window for i0",
                             "rows_window for i", "decode_chunk for j0", "decode_chunk while seg", "group_pair_window for blocks",
                             "rows_stretch for j", "rows_pair_window for blocks", "row_tile_scores for i", "row_tile_scores for s",
                             "row_value_tiles for m"}
            counted = sum(lp["own"]["total"] + lp["per_group"]["total"] for lp in k["loops"] if lp["source_loop"] in per_key_loops)
            # rare code outside the per-key loops runs once a block all the same (the state out of value_tiles'
            # layout at a pass's end)
            once_rare = k["rare_outside_loops"] + sum(lp["rare"] for lp in k["loops"] if lp["source_loop"] not in per_key_loops)
            result[f"{name}_{t}_per_block_once"] = k["hot_instructions"] - counted + once_rare
    return result


def tool_version(cmd):
    out = subprocess.run([cmd, "--version"], capture_output=True, text=True).stdout
    return [l for l in out.splitlines() if "release" in l or "Build" in l or "V1" in l][-1].strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nvdisasm", default=os.environ.get("NVDISASM") or shutil.which("nvdisasm"))
    ap.add_argument("--nvcc", default=os.environ.get("NVCC") or shutil.which("nvcc"))
    ap.add_argument("--out", default=OUTPUT)
    ap.add_argument("--listing", help="also keep the disassembly here")
    args = ap.parse_args()
    if not args.nvdisasm or not args.nvcc:
        raise SystemExit("needs nvcc and nvdisasm (--nvcc/--nvdisasm or NVCC/NVDISASM): see this script's docstring")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "pnmix_decode.cubin")
        compile_cubin(args.nvcc, SOURCE, cubin)
        patched = os.path.join(tmp, "patched.cubin")
        patch_header(cubin, patched)
        funcs, listing = disassemble(args.nvdisasm, patched)
    if args.listing:
        open(args.listing, "w").write(listing)
    sources = local_sources()
    LOCAL_FILES.update(os.path.basename(f) for f in sources)
    texts = {os.path.basename(f): open(f).read() for f in sources}
    cold_lines, rare_lines, rare_branches = line_sets(texts)
    loop_names = source_loop_lines(texts)
    f32_cold = union(cold_lines, f32_packed_cold(texts))
    fp16_f32_cold = union(cold_lines, f32_fp16_cold(texts))
    reports = {name: kernel_report(name, ins, f32_cold if name.startswith("packed_decode_chunk_f32")
                                   else fp16_f32_cold if name.startswith("fp16_decode_chunk_f32") else cold_lines,
                                   rare_lines, rare_branches, loop_names, mtile_lines(texts))
               for name, ins in sorted(funcs.items())}
    doc = {
        "what": "SASS instruction counts of pnmix_decode.cu for sm_90, per kernel and loop (src/main/cuda/sass-counts.py)",
        "regenerate": "NVDISASM=/path/to/nvdisasm python3 src/main/cuda/sass-counts.py",
        "source": SOURCE,
        # the kernel and every file of its folder it includes (SassFixtureTest compares each)
        "sources_sha256": {f: hashlib.sha256(open(f, "rb").read()).hexdigest() for f in sources},
        "nvcc": tool_version(args.nvcc),
        "nvcc_flags": " ".join(NVCC_FLAGS),
        "nvdisasm": tool_version(args.nvdisasm),
        "counting": "own = a loop's instructions less nested loops' and less cold blocks (reached only via BRA.DIV "
                    "or on paths the bench configuration never takes) and rare ones (the softmax's rescale side); both "
                    "sides of any other in-loop branch count (conditional: how many of own are not on every "
                    "iteration's path)",
        "source_loops": {name: "%s:%d" % where for where, name in sorted(loop_names.items())},
        "classes": CLASSES,
        "per_key": per_key(reports),
        "kernels": reports,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    for k, v in doc["per_key"].items():
        print(k, v["per_key_kv_head"]["total"] if isinstance(v, dict) and "per_key_kv_head" in v else v)


if __name__ == "__main__":
    sys.exit(main())

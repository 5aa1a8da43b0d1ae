"""SASS of a cubin, for sass-counts.py: compiled by nvcc for sm_90, disassembled by an nvdisasm that may predate
sm_90 (the header patched, opcodes it prints blank named from their encoding), each instruction with its source file
and line; its class (op_class), and the control-flow graph: basic blocks, their successors, dominators. Nothing here
knows the decode kernels; what the blocks mean (cold, rare, which loop is which) is sass-counts.py's."""
import os
import re
import struct
import subprocess

NVCC_FLAGS = ["-std=c++17", "-lineinfo", "-arch=sm_90", "-cubin"]


# Opcode fields (the low 12 bits of an instruction's first word) nvdisasm 11.8 prints blank, by their sm_90 names.
UNKNOWN_OPCODES = {0x836: "VIADD", 0xc36: "VIADD", 0x848: "VIMNMX", 0x248: "VIMNMX", 0xc48: "VIMNMX",
                   0x246: "VIADDMNMX", 0x446: "VIADDMNMX", 0xe46: "VIADDMNMX", 0x846: "VIADDMNMX", 0xc46: "VIADDMNMX"}


CLASSES = ["fp32_fma_mul_add", "fp64", "half", "mma", "mufu", "shfl", "integer_logic", "convert", "load_global",
           "load_shared", "store", "predicate_select_move", "branch_sync", "other"]


def op_class(name):
    """The class of an instruction by its mnemonic (modifiers dropped)."""
    base = name.split(".")[0]
    if base in ("FFMA", "FMUL", "FADD", "FMNMX", "FSETP", "FSET", "FCHK", "FSWZADD"):
        return "fp32_fma_mul_add" if base in ("FFMA", "FMUL", "FADD") else "predicate_select_move" if base == "FSETP" else "other"
    if base in ("DFMA", "DMUL", "DADD", "DSETP", "DMNMX"):
        return "fp64"
    if base in ("HFMA2", "HADD2", "HMUL2", "HSETP2", "HMNMX2"):
        # HFMA2.MMA with zero operands and HADD2.F32 are how ptxas moves a constant and widens an fp16.
        if name.startswith("HADD2.F32"):
            return "convert"
        if name.startswith("HFMA2.MMA"):
            return "predicate_select_move"
        return "half"
    if base == "HMMA":
        return "mma"
    if base == "MUFU":
        return "mufu"
    if base == "SHFL":
        return "shfl"
    if base in ("LOP3", "LOP", "SHF", "SHL", "SHR", "IMAD", "IADD3", "IADD", "LEA", "IMNMX", "VIADD", "VIMNMX",
                "VIADDMNMX", "ISETP", "IABS", "POPC", "FLO", "BREV", "PRMT", "BMSK", "IDP", "IMUL", "UIADD3", "ULOP3",
                "USHF", "UIMAD", "ULEA", "UISETP", "UPRMT", "UFLO", "UPOPC", "UMOV", "USEL"):
        return "integer_logic"
    if base in ("I2F", "F2I", "F2F", "I2FP", "F2IP", "FRND", "I2I", "F2FP"):
        return "convert"
    if base in ("LDG", "LD", "LDC", "ULDC", "LDL"):
        return "load_global" if base in ("LDG", "LD", "LDL") else "other"
    if base in ("LDS", "LDSM"):
        return "load_shared"
    if base in ("STG", "STS", "ST", "STL", "RED", "ATOM", "ATOMS", "ATOMG"):
        return "store"
    if base in ("SEL", "FSEL", "MOV", "CS2R", "S2R", "S2UR", "R2P", "P2R", "PLOP3", "VOTE", "VOTEU", "R2UR", "CS2UR"):
        return "predicate_select_move"
    if base in ("BRA", "BSSY", "BSYNC", "WARPSYNC", "EXIT", "RET", "CALL", "BAR", "NOP", "BREAK", "BPT", "YIELD",
                "JMP", "BRX", "JMX"):
        return "branch_sync"
    return "other"


def compile_cubin(nvcc, source, out):
    subprocess.run([nvcc] + NVCC_FLAGS + ["-o", out, source], check=True)


def patch_header(cubin, out):
    """A copy nvdisasm 11.8 reads: OSABI, ABI version and e_flags of the CUDA 11 sm_90 header."""
    b = bytearray(open(cubin, "rb").read())
    assert b[:4] == b"\x7fELF", "not an ELF cubin"
    b[7] = 51
    b[8] = 7
    struct.pack_into("<I", b, 0x30, 0x5a055a)
    open(out, "wb").write(b)


HEX = re.compile(r"/\* (0x[0-9a-f]{16}) \*/\s*$")


def disassemble(nvdisasm, cubin):
    """Per function, its instructions in order: address, mnemonic text, encoding, source file and line."""
    text = subprocess.run([nvdisasm, "-c", "-g", "-hex", cubin], check=True, capture_output=True, text=True).stdout
    funcs = {}
    cur = None
    kernel = None
    section_instructions = 0   # a function not inlined sits in its caller's section, after the kernel's code
    local_functions = set()
    pending = None
    where = (None, None)
    for line in text.split("\n"):
        m = re.match(r"\.text\.(\w+):", line)
        if m:
            cur = kernel = m.group(1)
            funcs[cur] = []
            section_instructions = 0
            pending = None
            where = (None, None)
            continue
        if cur is None:
            continue
        m = re.match(r"\s*\.type\s+(\S+),@function", line)
        if m:
            local_functions.add(m.group(1))
            continue
        m = re.match(r"(\S+):\s*$", line)
        if m and m.group(1) in local_functions and m.group(1).startswith("$"):
            # "$kernel$name": a function of its own, reached by CALL, reported as "kernel:name"
            cur = kernel + ":" + m.group(1).rsplit("$", 1)[-1]
            funcs[cur] = []
            funcs[cur + " base"] = section_instructions
            continue
        m = re.match(r'\s*//## File "(.*)", line (\d+)', line)
        if m:
            where = (os.path.basename(m.group(1)), int(m.group(2)))
            continue
        m = HEX.search(line)
        if not m:
            continue
        if pending is None:   # an instruction is two 64-bit words, the first on the line with its text
            pending = (line[:m.start()].strip(), int(m.group(1), 16))
            continue
        shown, lo = pending
        pending = None
        address = (funcs.get(cur + " base", 0) + len(funcs[cur])) * 16
        section_instructions += 1
        mm = re.match(r"/\*([0-9a-f]+)\*/\s+(.*?)\s*;?\s*$", shown)
        if mm:
            assert int(mm.group(1), 16) == address, (cur, shown)
            txt = mm.group(2)
        else:
            op = lo & 0xfff
            if op not in UNKNOWN_OPCODES:
                raise SystemExit(f"{cur}: opcode {op:#x} at {address:#x} unknown to this nvdisasm and to UNKNOWN_OPCODES")
            txt = UNKNOWN_OPCODES[op] + " (named from its opcode field)"
        pred = re.match(r"(@!?U?P[T0-9])\s+(.*)", txt)
        body = pred.group(2) if pred else txt
        funcs[cur].append(dict(a=address, txt=txt, name=body.split()[0], pred=bool(pred) and pred.group(1) not in ("@PT",),
                               lo=lo, file=where[0], line=where[1]))
    return {k: v for k, v in funcs.items() if not k.endswith(" base")}, text


def branch_target(ins):
    """A relative branch's target: the signed word offset is split over bits 16-23 and 34-63 of the first word."""
    lo = ins["lo"]
    v = ((lo >> 34) << 8) | ((lo >> 16) & 0xff)
    v &= (1 << 38) - 1
    if v >> 37:
        v -= 1 << 38
    return ins["a"] + 16 + 4 * v


def cfg(ins):
    """Basic blocks (start index, end index exclusive) and their successors, by instruction index."""
    n = len(ins)
    by_addr = {x["a"]: i for i, x in enumerate(ins)}
    leaders = {0}
    for i, x in enumerate(ins):
        nm = x["name"]
        if nm.startswith("BRA") or nm.startswith("EXIT") or nm.startswith("RET") or nm.startswith("BRX") or nm.startswith("JMX"):
            if i + 1 < n:
                leaders.add(i + 1)
            if nm.startswith("BRA"):
                t = branch_target(x)
                assert t in by_addr, (x, hex(t))
                leaders.add(by_addr[t])
    starts = sorted(leaders)
    blocks = [(s, starts[k + 1] if k + 1 < len(starts) else n) for k, s in enumerate(starts)]
    block_of = {s: k for k, (s, e) in enumerate(blocks)}
    succ = []
    div_targets = set()
    for k, (s, e) in enumerate(blocks):
        last = ins[e - 1]
        nm = last["name"]
        out = []
        falls = True
        if nm.startswith("BRA"):
            t = block_of[by_addr[branch_target(last)]]
            out.append(t)
            if nm.startswith("BRA.DIV"):
                div_targets.add(t)
            elif not last["pred"]:
                falls = False
        elif nm.startswith(("EXIT", "RET", "BRX", "JMX")) and not last["pred"]:
            falls = False
        if falls and e < n:
            out.append(block_of[e])
        succ.append(out)
    return blocks, succ, div_targets


def dominators(nb, succ):
    preds = [[] for _ in range(nb)]
    for u in range(nb):
        for v in succ[u]:
            preds[v].append(u)
    # reverse post-order from block 0
    order, seen, stack = [], [False] * nb, [(0, 0)]
    seen[0] = True
    while stack:
        u, k = stack.pop()
        if k < len(succ[u]):
            stack.append((u, k + 1))
            v = succ[u][k]
            if not seen[v]:
                seen[v] = True
                stack.append((v, 0))
        else:
            order.append(u)
    rpo = order[::-1]
    index = {u: i for i, u in enumerate(rpo)}
    idom = {0: 0}

    def intersect(a, b):
        while a != b:
            while index[a] > index[b]:
                a = idom[a]
            while index[b] > index[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for u in rpo[1:]:
            ps = [p for p in preds[u] if p in idom]
            if not ps:
                continue
            new = ps[0]
            for p in ps[1:]:
                new = intersect(p, new)
            if idom.get(u) != new:
                idom[u] = new
                changed = True
    return idom, preds


def dominates(idom, a, b):
    while True:
        if a == b:
            return True
        if b == 0 or b not in idom:
            return False
        b = idom[b]


def census(ins, blocks, ks, lines=None):
    """Instructions of blocks ks by class; lines ({file: line numbers}): only those from these source lines."""
    c = {name: 0 for name in CLASSES}
    for k in ks:
        s, e = blocks[k]
        for x in ins[s:e]:
            if lines is None or x["line"] in lines.get(x["file"], ()):
                c[op_class(x["name"])] += 1
    c["total"] = sum(c[name] for name in CLASSES)
    return c

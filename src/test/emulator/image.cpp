// Module image parsing. Layouts (little endian):
//   fatbin:  {u32 magic 0xBA55ED50, u16 version, u16 headerSize, u64 fatSize}, then entries, each
//            {u16 kind (1 PTX, 2 ELF), u16, u32 headerSize, u64 payloadSize, u32 compressedSize, u32,
//             u16 minor, u16 major, u32 arch, u32, u32, u64 flags, ...} followed by its payload.
//   cubin:   ELF64; kernels are FUNC symbols with STO_CUDA_ENTRY (0x10) in st_other; parameter sizes come
//            from the EIATTR_KPARAM_INFO records of section .nv.info.<kernel>.
#include "image.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

namespace emu {

namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint32_t kFatbinWrapperMagic = 0x466243B1u;
constexpr uint64_t kFlagCompressed = 0x2000;       // LZ4 payloads (older toolkits)
constexpr uint64_t kFlagCompressedZstd = 0x8000;   // what CUDA 13 sets for compressed payloads

template <typename T>
T rd(const unsigned char* p) {
    T v;
    memcpy(&v, p, sizeof v);
    return v;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_ident(char c) { return isalnum((unsigned char) c) || c == '_' || c == '$' || c == '.'; }

std::string strip_comments(const char* text, size_t n) {
    std::string out;
    out.reserve(n);
    for (size_t i = 0; i < n; i++) {
        if (text[i] == '/' && i + 1 < n && text[i + 1] == '/') {
            while (i < n && text[i] != '\n') i++;
            out += '\n';
        } else if (text[i] == '/' && i + 1 < n && text[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(text[i] == '*' && text[i + 1] == '/')) i++;
            i++;
            out += ' ';
        } else {
            out += text[i];
        }
    }
    return out;
}

// Position just after directive d (".version", ".entry", ...) found as a whole token at or after pos.
size_t find_directive(const std::string& s, const char* d, size_t pos) {
    size_t len = strlen(d);
    for (size_t at = s.find(d, pos); at != std::string::npos; at = s.find(d, at + 1)) {
        bool startOk = at == 0 || is_space(s[at - 1]);
        bool endOk = at + len < s.size() && is_space(s[at + len]);
        if (startOk && endOk) return at + len;
    }
    return std::string::npos;
}

unsigned ptx_type_size(const std::string& t) {
    static const char* const k8[] = {".u64", ".s64", ".b64", ".f64"};
    static const char* const k4[] = {".u32", ".s32", ".b32", ".f32"};
    static const char* const k2[] = {".u16", ".s16", ".b16", ".f16", ".bf16"};
    static const char* const k1[] = {".u8", ".s8", ".b8"};
    for (const char* x : k8) if (t == x) return 8;
    for (const char* x : k4) if (t == x) return 4;
    for (const char* x : k2) if (t == x) return 2;
    for (const char* x : k1) if (t == x) return 1;
    return 0;
}

// One `.param ...` declaration of an entry: its size in bytes, 0 when unreadable.
unsigned ptx_param_size(const std::string& decl) {
    std::vector<std::string> tok;
    std::string cur;
    for (char c : decl) {
        if (is_space(c)) {
            if (!cur.empty()) tok.push_back(cur), cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) tok.push_back(cur);
    unsigned elem = 0;
    for (const std::string& t : tok) {
        if (elem == 0) elem = ptx_type_size(t);
    }
    if (elem == 0) return 0;
    size_t lb = decl.find('['), rb = decl.find(']');
    unsigned count = 1;
    if (lb != std::string::npos && rb != std::string::npos && rb > lb) count = (unsigned) atoi(decl.c_str() + lb + 1);
    return elem * count;
}

CUresult parse_ptx(const char* text, size_t n, ImageEntry* e, std::string* why) {
    std::string s = strip_comments(text, n);
    e->ptx = true;
    size_t v = find_directive(s, ".version", 0);
    if (v == std::string::npos) {
        *why = "PTX without a .version directive";
        return CUDA_ERROR_INVALID_PTX;
    }
    char* end = nullptr;
    long major = strtol(s.c_str() + v, &end, 10);
    long minor = *end == '.' ? strtol(end + 1, nullptr, 10) : 0;
    e->isa = (int) (major * 10 + minor);
    size_t t = find_directive(s, ".target", 0);
    if (t != std::string::npos) {
        while (t < s.size() && is_space(s[t])) t++;
        size_t digits = s.find_first_of("0123456789", t);
        if (digits != std::string::npos) e->arch = (unsigned) atoi(s.c_str() + digits);
    }
    for (size_t at = find_directive(s, ".entry", 0); at != std::string::npos; at = find_directive(s, ".entry", at)) {
        while (at < s.size() && is_space(s[at])) at++;
        size_t nameEnd = at;
        while (nameEnd < s.size() && is_ident(s[nameEnd])) nameEnd++;
        ImageKernel k;
        k.name = s.substr(at, nameEnd - at);
        size_t p = nameEnd;
        while (p < s.size() && is_space(s[p])) p++;
        if (p < s.size() && s[p] == '(') {
            size_t close = s.find(')', p);
            if (close == std::string::npos) {
                *why = "unterminated parameter list of entry " + k.name;
                return CUDA_ERROR_INVALID_PTX;
            }
            std::string list = s.substr(p + 1, close - p - 1);
            size_t from = 0;
            while (from < list.size()) {
                size_t comma = list.find(',', from);
                if (comma == std::string::npos) comma = list.size();
                std::string decl = list.substr(from, comma - from);
                if (decl.find(".param") != std::string::npos) {
                    unsigned size = ptx_param_size(decl);
                    if (size == 0) {
                        *why = "cannot read parameter '" + decl + "' of entry " + k.name;
                        return CUDA_ERROR_INVALID_PTX;
                    }
                    k.paramSizes.push_back(size);
                }
                from = comma + 1;
            }
            at = close;
        }
        e->kernels.push_back(k);
    }
    return CUDA_SUCCESS;
}

// "Cuda compilation tools, release 13.0" in the cubin's toolkit note, as "13.0".
std::string elf_toolkit(const unsigned char* d, size_t n) {
    static const char kTag[] = "Cuda compilation tools, release ";
    const unsigned char* hit = std::search(d, d + n, kTag, kTag + sizeof kTag - 1);
    if (hit == d + n) return "";
    const char* v = (const char*) hit + sizeof kTag - 1;
    size_t len = 0;
    while (hit + sizeof kTag - 1 + len < d + n && (isdigit((unsigned char) v[len]) || v[len] == '.')) len++;
    return std::string(v, len);
}

CUresult parse_elf(const unsigned char* d, size_t n, ImageEntry* e, std::string* why) {
    e->ptx = false;
    if (n < 64 || memcmp(d, "\x7f" "ELF", 4) != 0 || d[4] != 2) {
        *why = "not a 64-bit ELF cubin";
        return CUDA_ERROR_INVALID_IMAGE;
    }
    uint32_t flags = rd<uint32_t>(d + 0x30);
    e->arch = d[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;   // EI_ABIVERSION 8 moved the SM field
    uint64_t shoff = rd<uint64_t>(d + 0x28);
    uint16_t shentsize = rd<uint16_t>(d + 0x3a), shnum = rd<uint16_t>(d + 0x3c), shstrndx = rd<uint16_t>(d + 0x3e);
    if (shentsize != 64 || shoff > n || (uint64_t) shnum * 64 > n - shoff || shstrndx >= shnum) {
        *why = "cubin section table out of bounds";
        return CUDA_ERROR_INVALID_IMAGE;
    }
    struct Sec {
        uint32_t name, type;
        uint64_t off, size;
        uint32_t link;
    };
    std::vector<Sec> secs(shnum);
    for (unsigned i = 0; i < shnum; i++) {
        const unsigned char* h = d + shoff + i * 64;
        secs[i] = {rd<uint32_t>(h), rd<uint32_t>(h + 4), rd<uint64_t>(h + 0x18), rd<uint64_t>(h + 0x20),
                   rd<uint32_t>(h + 0x28)};
        if (secs[i].type != 8 && (secs[i].off > n || secs[i].size > n - secs[i].off)) {
            *why = "cubin section out of bounds";
            return CUDA_ERROR_INVALID_IMAGE;
        }
    }
    auto str = [&](const Sec& table, uint32_t off) -> std::string {
        if (off >= table.size) return "";
        const char* p = (const char*) d + table.off + off;
        return std::string(p, strnlen(p, table.size - off));
    };
    const Sec& shstr = secs[shstrndx];
    e->toolkit = elf_toolkit(d, n);
    if (!e->toolkit.empty()) {
        int major = atoi(e->toolkit.c_str());
        size_t dot = e->toolkit.find('.');
        int minor = dot == std::string::npos ? 0 : atoi(e->toolkit.c_str() + dot + 1);
        e->isa = max_ptx_isa(major * 1000 + minor * 10);
    }
    for (const Sec& s : secs) {
        if (s.type != 2 || s.link >= shnum) continue;   // SHT_SYMTAB
        const Sec& strtab = secs[s.link];
        for (uint64_t at = 0; at + 24 <= s.size; at += 24) {
            const unsigned char* sym = d + s.off + at;
            if ((sym[4] & 0xf) != 2 || (sym[5] & 0x10) == 0) continue;   // STT_FUNC with STO_CUDA_ENTRY
            ImageKernel k;
            k.name = str(strtab, rd<uint32_t>(sym));
            k.paramsKnown = false;
            std::vector<std::pair<unsigned, unsigned>> params;   // (ordinal, size)
            for (const Sec& info : secs) {
                if (str(shstr, info.name) != ".nv.info." + k.name) continue;
                k.paramsKnown = true;
                for (uint64_t p = 0; p + 4 <= info.size;) {
                    const unsigned char* rec = d + info.off + p;
                    uint8_t format = rec[0], attr = rec[1];
                    uint64_t len = format == 4 ? 4 + rd<uint16_t>(rec + 2) : 4;   // EIFMT_SVAL carries a size
                    if (p + len > info.size) break;
                    if (attr == 0x17 && format == 4 && len >= 16) {              // EIATTR_KPARAM_INFO
                        params.push_back({rd<uint16_t>(rec + 8), (rd<uint32_t>(rec + 12) >> 18) & 0x3fff});
                    }
                    p += len;
                }
            }
            std::sort(params.begin(), params.end());
            for (auto& pr : params) k.paramSizes.push_back(pr.second);
            e->kernels.push_back(k);
        }
    }
    return CUDA_SUCCESS;
}

CUresult parse_fatbin(const unsigned char* d, Image* out, std::string* why) {
    uint16_t headerSize = rd<uint16_t>(d + 6);
    uint64_t fatSize = rd<uint64_t>(d + 8);
    if (headerSize < 16 || fatSize > (1ull << 32)) {
        *why = "implausible fatbin header";
        return CUDA_ERROR_INVALID_IMAGE;
    }
    out->kind = "fatbin";
    const unsigned char* p = d + headerSize;
    const unsigned char* end = p + fatSize;
    while (p + 64 <= end) {
        uint16_t kind = rd<uint16_t>(p);
        uint32_t entryHeader = rd<uint32_t>(p + 4);
        uint64_t payload = rd<uint64_t>(p + 8);
        uint32_t compressedSize = rd<uint32_t>(p + 16);
        uint32_t arch = rd<uint32_t>(p + 28);
        uint64_t flags = rd<uint64_t>(p + 40);
        if (entryHeader < 64 || payload > (uint64_t) (end - p) - entryHeader) {
            *why = "fatbin entry out of bounds";
            return CUDA_ERROR_INVALID_IMAGE;
        }
        const unsigned char* body = p + entryHeader;
        if (kind == 1 || kind == 2) {
            if ((flags & (kFlagCompressed | kFlagCompressedZstd)) != 0 || compressedSize != 0) {
                *why = "the fatbin is compressed: build it with `nvcc -fatbin -no-compress`";
                return CUDA_ERROR_INVALID_IMAGE;
            }
            ImageEntry e;
            CUresult r = kind == 1 ? parse_ptx((const char*) body, strnlen((const char*) body, payload), &e, why)
                                   : parse_elf(body, payload, &e, why);
            if (r != CUDA_SUCCESS) return r;
            e.arch = arch;
            out->entries.push_back(e);
        }
        p = body + payload;
    }
    if (out->entries.empty()) {
        *why = "fatbin without PTX or cubin entries";
        return CUDA_ERROR_INVALID_IMAGE;
    }
    return CUDA_SUCCESS;
}

}  // namespace

int max_ptx_isa(int v) {
    if (v >= 13000) return 90;
    if (v >= 12090) return 88;
    if (v >= 12080) return 87;
    if (v >= 12050) return 85;
    if (v >= 12040) return 84;
    if (v >= 12030) return 83;
    if (v >= 12020) return 82;
    if (v >= 12010) return 81;
    if (v >= 12000) return 80;
    return 78;
}

CUresult parse_image(const void* image, Image* out, std::string* why) {
    if (image == nullptr) {
        *why = "null image";
        return CUDA_ERROR_INVALID_VALUE;
    }
    const unsigned char* d = (const unsigned char*) image;
    uint32_t magic = rd<uint32_t>(d);
    if (magic == kFatbinWrapperMagic) {   // {int magic, int version, const void* data, void* filename}
        const void* inner = rd<const void*>(d + 8);
        if (inner == nullptr || rd<uint32_t>((const unsigned char*) inner) != kFatbinMagic) {
            *why = "fatbin wrapper without a fatbin";
            return CUDA_ERROR_INVALID_IMAGE;
        }
        return parse_fatbin((const unsigned char*) inner, out, why);
    }
    if (magic == kFatbinMagic) return parse_fatbin(d, out, why);
    ImageEntry e;
    if (memcmp(d, "\x7f" "ELF", 4) == 0) {
        out->kind = "cubin";
        // An ELF's extent: the section header table normally ends it.
        size_t n = (size_t) (rd<uint64_t>(d + 0x28) + (uint64_t) rd<uint16_t>(d + 0x3c) * 64);
        if (CUresult r = parse_elf(d, n, &e, why)) return r;
    } else {
        out->kind = "PTX";
        if (CUresult r = parse_ptx((const char*) d, strlen((const char*) d), &e, why)) return r;
    }
    out->entries.push_back(e);
    return CUDA_SUCCESS;
}

}  // namespace emu

// The kernel registry. Registration runs from static initialisers of the kernel translation units, so the
// table is a function-local static created on first use.
#include "registry.h"

#include <map>

#include "state.h"

namespace {

std::map<std::string, emu::KernelInfo>& table() {
    static auto* t = new std::map<std::string, emu::KernelInfo>;
    return *t;
}

}  // namespace

extern "C" __attribute__((visibility("hidden"))) void emu_register_kernel(
        const char* name, const char* source, void* fn, void (*invoke)(void*, const unsigned char*), int paramCount,
        const unsigned short* sizes, const unsigned short* offsets, unsigned argBytes) {
    auto& t = table();
    if (t.count(name) != 0) {
        emu::report("kernel %s is defined in both %s and %s; keeping the first", name, t[name].source.c_str(), source);
        return;
    }
    emu::KernelInfo k{name, source, fn, invoke, std::vector<unsigned short>(sizes, sizes + paramCount),
                      std::vector<unsigned short>(offsets, offsets + paramCount), argBytes};
    t.emplace(name, std::move(k));
}

namespace emu {

const KernelInfo* find_kernel(const std::string& name) {
    auto it = table().find(name);
    return it == table().end() ? nullptr : &it->second;
}

}  // namespace emu

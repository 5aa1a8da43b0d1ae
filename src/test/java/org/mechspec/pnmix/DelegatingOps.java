package org.mechspec.pnmix;


/** The CPU twin, for mutant kernels to override what they break ({@code cpu} is the unbroken one). */
class DelegatingOps extends ForwardingPackedCacheOps {
    final CpuPackedCacheOps cpu;

    DelegatingOps() {
        this(new CpuPackedCacheOps());
    }

    private DelegatingOps(CpuPackedCacheOps cpu) {
        super(cpu);
        this.cpu = cpu;
    }

    @Override
    public String name() {
        return "mutant";
    }
}

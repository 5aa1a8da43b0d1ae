package org.mechspec.spec;

/**
 * What a property half ({@code @Contract @Test void p(PropertyRun run)}) knows of its check: the manifest and the
 * threshold, read as a seeded half reads them ({@link SeedRun#threshold()}), so no test restates a threshold.
 */
public record PropertyRun(Manifest manifest, String check) {
    /**
     * What the property exercises: the outside implementation's backend when the run judges one
     * ({@code -Dmechspec.implementation}), else the CPU backend. Seams built from it ({@code PackedCacheOps.forBackend},
     * {@code Solvers.on}, …) give the implementation's operations where it serves them.
     */
    public org.mechspec.compute.Backend backend() {
        org.mechspec.compute.Backend worker = Implementations.backend();
        return worker != null ? worker : org.mechspec.compute.CpuBackend.INSTANCE;
    }

    /** The check's threshold from the manifest. */
    public double threshold() {
        double t = manifest.check(check).threshold();
        if (Double.isNaN(t)) {
            throw new ManifestException(manifest.file() + ": check '" + check + "' declares no 'threshold'");
        }
        return t;
    }
}

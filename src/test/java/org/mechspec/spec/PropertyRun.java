package org.mechspec.spec;

/**
 * What a property half ({@code @Contract @Test void p(PropertyRun run)}) knows of its check: the manifest and the
 * threshold, read as a seeded half reads them ({@link SeedRun#threshold()}), so no test restates a threshold.
 */
public record PropertyRun(Manifest manifest, String check) {
    /** The check's threshold from the manifest. */
    public double threshold() {
        double t = manifest.check(check).threshold();
        if (Double.isNaN(t)) {
            throw new ManifestException(manifest.file() + ": check '" + check + "' declares no 'threshold'");
        }
        return t;
    }
}

package org.mechspec.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.mechspec.spec.Manifest;

/**
 * Differences between two runs of one paper and backend (or an outside implementation's run and mechspec's), metric
 * by metric against the manifest tolerances
 * (provenance and runtime are never compared). Used by the build's report gate and by {@code mechspec diff}.
 */
public final class ArtifactDiff {
    private ArtifactDiff() {
    }

    /** Findings naming the JSON path of each drift; empty when {@code fresh} matches {@code reference}. */
    public static List<String> compare(Manifest manifest, PaperRun fresh, PaperRun reference) {
        List<String> out = new ArrayList<>();
        // An outside implementation is judged against mechspec's own run of the paper, whatever the backend names.
        boolean implementation = fresh.deviceProvenance.has("implementation") || reference.deviceProvenance.has("implementation");
        if (!fresh.paper.equals(reference.paper) || !fresh.backend.equals(reference.backend) && !implementation) {
            out.add("mechspec: comparing " + fresh.paper + "." + fresh.backend + " with " + reference.paper + "." + reference.backend);
            return out;
        }
        if (!fresh.checkpoint.equals(reference.checkpoint)) {
            out.add("mechspec.checkpoint: " + describe(fresh) + " vs reference " + describe(reference)
                    + ": runs on different checkpoints are not compared");
            return out;
        }
        if (!fresh.seeds.keySet().equals(reference.seeds.keySet())) {
            out.add("mechspec.seeds: " + fresh.seeds.keySet() + " vs reference " + reference.seeds.keySet());
        }
        for (Map.Entry<Long, PaperRun.SeedRecord> e : fresh.seeds.entrySet()) {
            PaperRun.SeedRecord ref = reference.seeds.get(e.getKey());
            if (ref == null) {
                continue;
            }
            String at = "mechspec.seeds." + e.getKey();
            if (!adversarialMath(fresh) && !adversarialMath(reference)) {
                compareMetrics(manifest, at, e.getValue().metrics, ref.metrics, implementation, out);
                // A baseline is mechspec's own computation whatever the run judges: compared as measured figures too.
                for (String b : union(e.getValue().baselines.keySet(), ref.baselines.keySet())) {
                    compareMetrics(manifest, at + ".baselines." + b, e.getValue().baselines.getOrDefault(b, java.util.Map.of()),
                            ref.baselines.getOrDefault(b, java.util.Map.of()), false, out);
                }
            }
            for (String check : union(e.getValue().checks.keySet(), ref.checks.keySet())) {
                if (e.getValue().notJudged.containsKey(check) || ref.notJudged.containsKey(check)) {
                    continue; // no verdict to compare: neither held nor a mismatch (its metrics are still compared)
                }
                Boolean a = fresh.seeds.get(e.getKey()).checks.containsKey(check) ? fresh.checkOutcome(e.getKey(), check) : null;
                Boolean b = ref.checks.containsKey(check) ? reference.checkOutcome(e.getKey(), check) : null;
                if (implementation && b == null) {
                    // A device-side check (the worker against the oracle) that mechspec's CPU run has no twin of: it must hold.
                    if (!Boolean.TRUE.equals(a)) {
                        out.add(at + ".checks." + check + ": " + a + " (mechspec's CPU run has no verdict to match; it must hold)");
                    }
                    continue;
                }
                if (a == null || !a.equals(b)) {
                    out.add(at + ".checks." + check + ": " + a + " vs reference " + b);
                }
            }
        }
        return out;
    }

    /**
     * A run on the emulated driver with adversarial math (MECHSPEC_EMU_MATH=adversarial:SEED, src/test/emulator): its
     * exp and friends are a different GPU's for every seed, within CUDA's documented error, so its metric values are
     * no reference's and a reference's are not its; its check outcomes must still match. The driver names such a
     * device "mechspec CUDA emulator (CPU, adversarial math, seed N)".
     */
    static boolean adversarialMath(PaperRun run) {
        return run.device.startsWith("mechspec CUDA emulator") && run.device.contains("adversarial math");
    }

    private static String describe(PaperRun run) {
        return run.checkpoint.isEmpty() ? "the paper's own fixture" : run.checkpoint.toString();
    }

    /**
     * With {@code implementation}, an outside implementation's run against mechspec's: a metric only it has (a device-side
     * check's) and one the manifest lists under {@code implementation_errors} (the implementation's own rounding error
     * against an oracle, which its check's bound judges and no other correct implementation reproduces) are not compared.
     */
    private static void compareMetrics(Manifest manifest, String at, Map<String, Object> a, Map<String, Object> b, boolean implementation,
                                       List<String> out) {
        for (String name : union(a.keySet(), b.keySet())) {
            Object x = a.get(name);
            Object y = b.get(name);
            String path = at + ".metrics." + name;
            if (implementation && (y == null || manifest.implementationErrors().contains(name))) {
                continue;
            }
            if (x == null || y == null) {
                out.add(path + ": " + x + " vs reference " + y);
            } else if (x instanceof Number nx && y instanceof Number ny) {
                Manifest.Metric m = manifest.metrics().get(name);
                if (m == null) {
                    out.add(path + ": not declared in " + manifest.file());
                } else if (!m.withinTolerance(nx.doubleValue(), ny.doubleValue())) {
                    double tol = m.abs() + m.rel() * Math.abs(ny.doubleValue());
                    out.add(String.format(Locale.ROOT, "%s: %s vs reference %s (|diff| %.3g > tolerance %.3g)", path, x, y,
                            Math.abs(nx.doubleValue() - ny.doubleValue()), tol));
                }
            } else if (!x.equals(y)) {
                out.add(path + ": " + x + " vs reference " + y);
            }
        }
    }

    private static List<String> union(java.util.Set<String> a, java.util.Set<String> b) {
        List<String> out = new ArrayList<>(a);
        b.stream().filter(k -> !a.contains(k)).forEach(out::add);
        return out;
    }
}

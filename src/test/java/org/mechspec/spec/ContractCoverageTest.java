package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The two-way meta-test: every check declared in contracts/*.json has a @Contract test (seeded half),
 * and every @Contract names a declared check of a paper that has a manifest.
 */
@Tag("platform")
class ContractCoverageTest {

    @Test
    void everyDeclaredCheckHasASeededContractAndEveryContractIsDeclared() {
        List<Manifest> manifests = ManifestLoader.loadAll(Path.of(System.getProperty("mechspec.contracts.dir", "contracts")));
        assertThat(manifests).as("manifests in contracts/").isNotEmpty();
        List<Method> contracts = discoveredContractMethods();
        assertThat(findings(manifests, contracts)).as("contract coverage findings").isEmpty();
    }

    @Test
    void mutantUndeclaredCheckAndMissingTestAreBothReported() throws Exception {
        Manifest kernels = ManifestLoader.load(Path.of(System.getProperty("mechspec.contracts.dir", "contracts"), "kernels.json"));
        Method rogue = Rogue.class.getDeclaredMethod("rogue", SeedRun.class);
        List<String> f = findings(List.of(kernels), List.of(rogue));
        assertThat(f).anyMatch(s -> s.contains("undeclared check 'no_such_check'"));
        assertThat(f).anyMatch(s -> s.contains("'fp16_round_nearest_even_exhaustive' has no @Seeded @Contract test"));
    }

    static List<String> findings(List<Manifest> manifests, List<Method> contracts) {
        List<String> out = new ArrayList<>();
        Set<String> seeded = new HashSet<>();
        for (Method m : contracts) {
            Contract c = m.getAnnotation(Contract.class);
            Manifest manifest = manifests.stream().filter(x -> x.paper().equals(c.paper())).findFirst().orElse(null);
            if (manifest == null) {
                out.add(m + " names paper '" + c.paper() + "' which has no manifest in contracts/");
            } else if (!manifest.checks().containsKey(c.check())) {
                out.add(m + " names undeclared check '" + c.check() + "' of " + c.paper());
            }
            if (m.isAnnotationPresent(Seeded.class)) {
                seeded.add(c.paper() + "/" + c.check());
            }
        }
        for (Manifest manifest : manifests) {
            for (String check : manifest.checks().keySet()) {
                if (!seeded.contains(manifest.paper() + "/" + check)) {
                    out.add(manifest.file() + ": declared check '" + check + "' has no @Seeded @Contract test");
                }
            }
        }
        return out;
    }

    /** Every @Contract method the JUnit Platform discovers under org.mechspec (fixtures excluded). */
    static List<Method> discoveredContractMethods() {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectPackage("org.mechspec")).build();
        TestPlan plan = LauncherFactory.create().discover(request);
        Set<String> seen = new TreeSet<>();
        List<Method> out = new ArrayList<>();
        for (TestIdentifier root : plan.getRoots()) {
            collect(plan, root, seen, out);
        }
        return out;
    }

    static boolean isFixture(Class<?> c) {
        Tag t = c.getAnnotation(Tag.class);
        return t != null && t.value().equals(FIXTURE_TAG);
    }

    private static void collect(TestPlan plan, TestIdentifier id, Set<String> seen, List<Method> out) {
        id.getSource().ifPresent(source -> {
            if (source instanceof MethodSource ms) {
                Method m = ms.getJavaMethod();
                if (m.isAnnotationPresent(Contract.class) && !isFixture(m.getDeclaringClass())
                        && seen.add(m.toGenericString())) {
                    out.add(m);
                }
            }
        });
        plan.getChildren(id).forEach(child -> collect(plan, child, seen, out));
    }

    /** Classes tagged so run only inside other tests' launchers; Surefire excludes the tag. */
    static final String FIXTURE_TAG = "launcher-fixture";

    @Tag(FIXTURE_TAG)
    static class Rogue {
        @Contract(paper = "kernels", check = "no_such_check")
        @Seeded
        void rogue(SeedRun run) {
        }
    }
}

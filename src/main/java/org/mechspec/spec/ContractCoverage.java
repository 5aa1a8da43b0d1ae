package org.mechspec.spec;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The two-way coverage rule between contracts/*.json and the tests: every declared check has a {@link Seeded}
 * {@link Contract} test and a {@link Breaks} mutant test; every {@code @Contract} and {@code @Breaks} names a declared
 * check of a paper that has a manifest. Tests are found by package, as the JUnit Platform discovers them, and each
 * test class must be one Surefire's includes in pom.xml run, so no class name can hide a contract from the build.
 */
public final class ContractCoverage {
    /** Classes tagged so run only inside other tests' launchers; Surefire excludes the tag. */
    public static final String FIXTURE_TAG = "launcher-fixture";

    private ContractCoverage() {
    }

    /** The findings for the manifests in {@code -Dmechspec.contracts.dir} (default contracts/); empty when covered. */
    public static List<String> findings() {
        List<Manifest> manifests = ManifestLoader.loadAll(contractsDir());
        List<String> out = findings(manifests, discoveredTestMethods(packages(manifests)), surefireIncludes(projectRoot().resolve("pom.xml")));
        out.addAll(sourcesFindings(manifests));
        return out;
    }

    /**
     * Each manifest's {@code sources} against what its package executes ({@link ExecutedSources}), so a paper-only run
     * (-Dgroups=KEY) says so too, not only the full suite's ExecutedSourcesTest.
     */
    static List<String> sourcesFindings(List<Manifest> manifests) {
        List<String> out = new ArrayList<>();
        for (Manifest m : manifests) {
            if (m.sources().isEmpty()) {
                continue; // a test's fixture manifest, which names no code
            }
            if (!m.javaPackage().equals(Manifest.DEFAULT_PACKAGE)) {
                // A paper in its own repository: mechspec's sources are in its jar, not this tree, so only the paper's
                // own package is checked to be there and listed first.
                String own = "src/main/java/" + m.javaPackage().replace('.', '/');
                if (!m.sources().get(0).equals(own) || !Files.isDirectory(projectRoot().resolve(own))) {
                    out.add(m.paper() + ": the first of 'sources' in " + m.file() + " must be the paper's package folder " + own
                            + ", got " + m.sources().get(0));
                }
                continue;
            }
            if (!m.sources().get(0).startsWith("src/main/java/org/mechspec/")) {
                out.add(m.paper() + ": the first of 'sources' in " + m.file() + " must be the paper's package"
                        + " (src/main/java/org/mechspec/<pkg>), got " + m.sources().get(0));
                continue;
            }
            Set<String> declared = new TreeSet<>(m.sources());
            Set<String> executed = ExecutedSources.of(Path.of(m.sources().get(0)).getFileName().toString());
            if (!declared.equals(executed)) {
                out.add(m.paper() + ": 'sources' in " + m.file() + " must be exactly what its package executes: " + executed
                        + " (declared " + declared + ")");
            }
        }
        return out;
    }

    /** How new-paper's mutant stubs begin their {@code @Breaks} description. */
    static final String NOT_WRITTEN = "not written yet";

    static List<String> findings(List<Manifest> manifests, List<Method> tests, List<String> includes) {
        List<String> out = new ArrayList<>();
        tests.stream().map(m -> topLevel(m.getDeclaringClass())).distinct().filter(c -> !runByTheBuild(c, includes))
                .forEach(c -> out.add(c.getName() + " holds tests, but Surefire's includes " + includes + " in pom.xml do not run it"));
        Set<String> seeded = new HashSet<>();
        Set<String> broken = new HashSet<>();
        for (Method m : tests) {
            Contract c = m.getAnnotation(Contract.class);
            if (c != null) {
                named(out, manifests, m, "@Contract", c.paper(), c.check());
                if (m.isAnnotationPresent(Seeded.class)) {
                    seeded.add(c.paper() + "/" + c.check());
                }
            }
            for (Breaks b : m.getAnnotationsByType(Breaks.class)) {
                named(out, manifests, m, "@Breaks", b.paper(), b.check());
                broken.add(b.paper() + "/" + b.check());
                if (b.description().startsWith(NOT_WRITTEN)) {
                    out.add(m + ": @Breaks(check = \"" + b.check() + "\") still has the scaffold's description; say what the broken"
                            + " mechanism does (the reject list of summary.md and Allure prints it)");
                }
            }
        }
        for (Manifest manifest : manifests) {
            for (String check : manifest.checks().keySet()) {
                String key = manifest.paper() + "/" + check;
                if (!seeded.contains(key)) {
                    out.add(manifest.file() + ": declared check '" + check + "' has no @Seeded @Contract test");
                }
                if (!broken.contains(key)) {
                    out.add(manifest.file() + ": declared check '" + check + "' has no mutant test (@Breaks(paper = \""
                            + manifest.paper() + "\", check = \"" + check + "\") on a test that makes it report false)");
                }
            }
        }
        return out;
    }

    private static void named(List<String> out, List<Manifest> manifests, Method m, String what, String paper, String check) {
        Manifest manifest = manifests.stream().filter(x -> x.paper().equals(paper)).findFirst().orElse(null);
        if (manifest == null) {
            out.add(m + ": " + what + " names paper '" + paper + "' which has no manifest in contracts/");
        } else if (!manifest.checks().containsKey(check)) {
            out.add(m + ": " + what + " names undeclared check '" + check + "' of " + paper);
        }
    }

    /** The include patterns of the build's Surefire configuration (the first {@code <includes>} in pom.xml). */
    static List<String> surefireIncludes(Path pom) {
        try {
            String xml = Files.readString(pom);
            int at = xml.indexOf("<artifactId>maven-surefire-plugin</artifactId>");
            Matcher block = Pattern.compile("<includes>(.*?)</includes>", Pattern.DOTALL).matcher(xml);
            if (at < 0 || !block.find(at)) {
                return List.of("**/Test*.java", "**/*Test.java", "**/*Tests.java", "**/*TestCase.java"); // Surefire's defaults
            }
            List<String> out = new ArrayList<>();
            Matcher include = Pattern.compile("<include>\\s*(.*?)\\s*</include>").matcher(block.group(1));
            while (include.find()) {
                out.add(include.group(1));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + pom + " for Surefire's includes", e);
        }
    }

    static boolean runByTheBuild(Class<?> c, List<String> includes) {
        String path = c.getName().replace('.', '/') + ".java";
        return includes.stream().anyMatch(glob -> path.matches(glob.replace(".", "\\.").replace("**/", "\0").replace("*", "[^/]*")
                .replace("\0", "(.*/)?")));
    }

    private static Class<?> topLevel(Class<?> c) {
        return c.getEnclosingClass() == null ? c : topLevel(c.getEnclosingClass());
    }

    /** The package of every manifest ({@link Manifest#DEFAULT_PACKAGE} when there is none): where their tests are. */
    public static List<String> packages(List<Manifest> manifests) {
        Set<String> out = new TreeSet<>();
        manifests.forEach(m -> out.add(m.javaPackage()));
        if (out.isEmpty()) {
            out.add(Manifest.DEFAULT_PACKAGE);
        }
        // A package inside another is discovered with it.
        return out.stream().filter(p -> out.stream().noneMatch(q -> !q.equals(p) && p.startsWith(q + "."))).toList();
    }

    /** Every test method the JUnit Platform discovers in the given packages, fixtures excluded. */
    static List<Method> discoveredTestMethods(List<String> packages) {
        TestPlan plan = LauncherFactory.create().discover(LauncherDiscoveryRequestBuilder.request()
                .selectors(packages.stream().map(p -> selectPackage(p)).toList()).build());
        Set<String> seen = new TreeSet<>();
        List<Method> out = new ArrayList<>();
        plan.getRoots().forEach(root -> collect(plan, root, seen, out));
        return out;
    }

    /** Whether the working folder is the project (pom.xml and the manifests' folder), whose tests are all at hand. */
    public static boolean inACheckout() {
        return Files.isRegularFile(projectRoot().resolve("pom.xml")) && Files.isDirectory(contractsDir());
    }

    /**
     * The project whose papers run: {@code -Dmechspec.project.dir} ({@code mechspec run --project} sets it for a paper
     * kept in its own repository), else the working folder.
     */
    public static Path projectRoot() {
        return Path.of(System.getProperty("mechspec.project.dir", ""));
    }

    private static Path contractsDir() {
        return Path.of(System.getProperty("mechspec.contracts.dir", projectRoot().resolve("contracts").toString()));
    }

    /** Whether this plan runs a paper's contract (not only fixtures): then the coverage rule is checked with it. */
    public static boolean runsAContract(TestPlan plan) {
        List<Method> found = new ArrayList<>();
        plan.getRoots().forEach(root -> collect(plan, root, new TreeSet<>(), found));
        return found.stream().anyMatch(m -> m.isAnnotationPresent(Contract.class));
    }

    static boolean isFixture(Class<?> c) {
        for (Class<?> k = c; k != null; k = k.getEnclosingClass()) {
            for (Tag t : k.getAnnotationsByType(Tag.class)) { // by type: a class with two @Tag holds them in @Tags
                if (t.value().equals(FIXTURE_TAG)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static void collect(TestPlan plan, TestIdentifier id, Set<String> seen, List<Method> out) {
        id.getSource().ifPresent(source -> {
            if (source instanceof MethodSource ms) {
                Method m = ms.getJavaMethod();
                if (!isFixture(m.getDeclaringClass()) && seen.add(m.toGenericString())) {
                    out.add(m);
                }
            }
        });
        plan.getChildren(id).forEach(child -> collect(plan, child, seen, out));
    }
}

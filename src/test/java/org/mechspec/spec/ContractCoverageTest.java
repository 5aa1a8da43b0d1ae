package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The coverage rule (ContractCoverage) holds for this tree, and reports each kind of gap. The reporter also checks the
 * rule in every run that selects a contract (any -Dgroups), so this test is one place it is seen, not the only one.
 */
@Tag("platform")
class ContractCoverageTest {
    private static final Path CONTRACTS = Path.of(System.getProperty("mechspec.contracts.dir", "contracts"));

    @Test
    void everyDeclaredCheckHasASeededContractAndAMutantAndEveryAnnotationIsDeclared() {
        assertThat(ManifestLoader.loadAll(CONTRACTS)).as("manifests in contracts/").isNotEmpty();
        assertThat(ContractCoverage.findings()).as("contract coverage findings").isEmpty();
    }

    @Test
    void aManifestWhoseSourcesMissWhatItsPackageExecutesIsAFindingOfEveryContractRun(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(CONTRACTS.resolve("fold-bias.json").toFile());
        var sources = (com.fasterxml.jackson.databind.node.ArrayNode) json.get("sources");
        String dropped = sources.remove(sources.size() - 1).asText();
        java.nio.file.Files.writeString(dir.resolve("fold-bias.json"), json.toString());
        Manifest trimmed = ManifestLoader.load(dir.resolve("fold-bias.json"));

        assertThat(ContractCoverage.sourcesFindings(List.of(ManifestLoader.load(CONTRACTS.resolve("fold-bias.json"))))).isEmpty();
        assertThat(ContractCoverage.sourcesFindings(List.of(trimmed))).singleElement().asString()
                .startsWith("fold-bias: 'sources' in ").contains("must be exactly what its package executes", dropped);

        sources.set(0, new com.fasterxml.jackson.databind.node.TextNode("src/main/cuda/foldbias.cu"));
        java.nio.file.Files.writeString(dir.resolve("fold-bias.json"), json.toString());
        assertThat(ContractCoverage.sourcesFindings(List.of(ManifestLoader.load(dir.resolve("fold-bias.json"))))).singleElement()
                .asString().contains("the first of 'sources'", "must be the paper's package", "got src/main/cuda/foldbias.cu");
    }

    @Test
    void undeclaredChecksAndMissingTestsAndMutantsAreAllReported() throws Exception {
        Manifest kernels = ManifestLoader.load(CONTRACTS.resolve("kernels.json"));
        Method rogue = Rogue.class.getDeclaredMethod("rogue", SeedRun.class);
        Method rogueMutant = Rogue.class.getDeclaredMethod("rogueMutant");
        Method scaffolded = Rogue.class.getDeclaredMethod("scaffoldedMutant");
        List<String> f = ContractCoverage.findings(List.of(kernels), List.of(rogue, rogueMutant, scaffolded), List.of("**/*.java"));
        assertThat(f).anyMatch(s -> s.contains("@Contract names undeclared check 'no_such_check'"));
        assertThat(f).anyMatch(s -> s.contains("@Breaks names undeclared check 'another_missing_check'"));
        assertThat(f).anyMatch(s -> s.contains("'fp16_round_nearest_even_exhaustive' has no @Seeded @Contract test"));
        assertThat(f).anyMatch(s -> s.contains("'fp16_round_nearest_even_exhaustive' has no mutant test"));
        assertThat(f).anyMatch(s -> s.contains("scaffoldedMutant()") && s.contains("still has the scaffold's description"));
    }

    @Test
    void theRejectListPrintsAMutantsDescriptionElseItsName() throws Exception {
        Method described = Rogue.class.getDeclaredMethod("scaffoldedMutant");
        Method named = Rogue.class.getDeclaredMethod("rogueMutant");
        assertThat(KnownRejections.line(described, described.getAnnotation(Breaks.class))).isEqualTo("not written yet: say what is broken (Rogue)");
        assertThat(KnownRejections.line(named, named.getAnnotation(Breaks.class))).isEqualTo("rogue mutant (Rogue)");
        assertThat(KnownRejections.words("flippedFoldSignBreaksTheLogitIdentity")).isEqualTo("flipped fold sign breaks the logit identity");
        assertThat(KnownRejections.of("kernels", "rng_pinned_test_vector")).contains("mutant rng wrong seed fails test vector (KernelMutantsTest)");
    }

    @Test
    void aTestClassTheBuildWouldNotRunIsReported() throws Exception {
        // A contract class renamed KiviContract under includes of **/*Contracts.java gave a green build without its paper.
        Method rogue = Rogue.class.getDeclaredMethod("rogue", SeedRun.class);
        List<String> narrowed = List.of("**/*Contracts.java");
        assertThat(ContractCoverage.findings(List.of(), List.of(rogue), narrowed))
                .contains("org.mechspec.spec.ContractCoverageTest holds tests, but Surefire's includes [**/*Contracts.java] in pom.xml do not run it");
        assertThat(ContractCoverage.runByTheBuild(ContractCoverageTest.class, List.of("**/*Test.java"))).isTrue();
        assertThat(ContractCoverage.runByTheBuild(ContractCoverageTest.class, List.of("**/spec/*.java"))).isTrue();
        assertThat(ContractCoverage.runByTheBuild(ContractCoverageTest.class, List.of("**/*Tests.java", "*Test.java"))).isFalse();
        assertThat(ContractCoverage.surefireIncludes(Path.of("pom.xml"))).isNotEmpty();
    }

    @Tag(ContractCoverage.FIXTURE_TAG)
    static class Rogue {
        @Contract(paper = "kernels", check = "no_such_check")
        @Seeded
        void rogue(SeedRun run) {
        }

        @Breaks(paper = "kernels", check = "another_missing_check")
        void rogueMutant() {
        }

        @Breaks(paper = "kernels", check = "another_missing_check", description = "not written yet: say what is broken")
        void scaffoldedMutant() {
        }
    }
}

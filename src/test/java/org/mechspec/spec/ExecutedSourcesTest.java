package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A paper's provenance hashes what it can execute: its manifest's {@code sources} are its package (the first
 * entry), every {@code org.mechspec} package its main classes import, transitively, and every kernel those
 * packages load by module name ({@code src/main/cuda/<module>.cu}) with the headers the kernels include.
 * So a change in one paper's code or kernels never changes another paper's hashes, and nothing a paper runs
 * is left out.
 */
@Tag("platform")
class ExecutedSourcesTest {

    @Test
    void everyManifestDeclaresExactlyWhatItsPackageExecutes() {
        List<Manifest> manifests = ManifestLoader.loadAll(Path.of(System.getProperty("mechspec.contracts.dir", "contracts")));
        assertThat(manifests).isNotEmpty().allSatisfy(m -> assertThat(m.sources()).as("%s: sources", m.paper()).isNotEmpty());
        // The rule itself lives in ContractCoverage, which every contract run also applies.
        assertThat(ContractCoverage.sourcesFindings(manifests)).isEmpty();
    }

    /** A package importing another pulls in that one's sources and kernels too. */
    @Test
    void theClosureFollowsImportsAndKernelModules() {
        Set<String> oal = ExecutedSources.of("oal");
        assertThat(oal).contains("src/main/java/org/mechspec/model", "src/main/java/org/mechspec/compute",
                "src/main/cuda/oal.cu", "src/main/cuda/attention.cu");
        assertThat(oal).doesNotContain("src/main/java/org/mechspec/pnmix", "src/main/cuda/pnmix.cu",
                "src/main/java/org/mechspec/foldbias", "src/main/cuda/foldbias.cu");
    }
}

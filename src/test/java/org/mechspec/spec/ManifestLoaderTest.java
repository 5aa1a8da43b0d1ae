package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

@Tag("platform")
class ManifestLoaderTest {
    private static final String VALID = """
            {"paper": "demo", "title": "t", "seeds": [42], "dataset": {}, "protocol": {}, "claim_policy": {},
             "limitations": [], "sources": [], "checks": [{"name": "c", "description": "d", "threshold": 1e-12}],
             "metrics": [{"name": "m", "tolerance": {"abs": 0.5, "rel": 0}}], "artifact": {}}
            """;

    @Test
    void validManifestLoadsWithThresholdsAndTolerances() {
        Manifest m = ManifestLoader.parse("demo.json", VALID);
        assertThat(m.check("c").threshold()).isEqualTo(1e-12);
        assertThat(m.metric("m").withinTolerance(1.4, 1.0)).isTrue();
        assertThat(m.metric("m").withinTolerance(1.6, 1.0)).isFalse();
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(delimiter = '|', value = {
        "\"seeds\": [42]|\"seeds\": []|field 'seeds' must not be empty",
        "\"seeds\": [42]|\"seeds\": [4.5]|field 'seeds[0]' must be an integer",
        "\"paper\": \"demo\"|\"paper\": \"Demo Paper\"|field 'paper' must be lower-case",
        "{\"name\": \"c\", \"description\": \"d\", \"threshold\": 1e-12}|{\"name\": \"c\", \"threshold\": 1e-12}|field 'checks[0].description' must be a non-empty string",
        "\"threshold\": 1e-12|\"threshold\": \"small\"|field 'checks[0].threshold' must be a number",
        "\"abs\": 0.5|\"abs\": -1|field 'metrics[0].tolerance' must not be negative",
        "\"artifact\": {}|\"artifact\": []|field 'artifact' must be an object",
        "\"dataset\": {}, |                |field 'dataset' must be an object",
    })
    void malformedManifestNamesFileAndField(String from, String to, String message) {
        String broken = VALID.replace(from, to == null ? "" : to);
        assertThat(broken).isNotEqualTo(VALID);
        assertThatThrownBy(() -> ManifestLoader.parse("contracts/demo.json", broken))
                .isInstanceOf(ManifestException.class).hasMessageStartingWith("contracts/demo.json: ").hasMessageContaining(message);
    }

    @Test
    void invalidJsonNamesFileAndLine() {
        assertThatThrownBy(() -> ManifestLoader.parse("contracts/x.json", "{\n\"paper\": }"))
                .isInstanceOf(ManifestException.class).hasMessageContaining("contracts/x.json: invalid JSON at line 2");
    }

    @Test
    void jsonNestedTooDeepIsOneMessageNotANullPointer() {
        assertThatThrownBy(() -> ManifestLoader.parse("contracts/deep.json", "[".repeat(100_000)))
                .isInstanceOf(ManifestException.class).hasMessageStartingWith("contracts/deep.json: invalid JSON");
    }

    @Test
    void hypothesisOverUndeclaredMetricIsRejected() {
        String broken = VALID.replace("\"artifact\": {}", "\"artifact\": {}, \"hypotheses\": [{\"lhs\": \"m\", \"rhs\": \"nope\", \"sentence\": \"s\"}]");
        assertThatThrownBy(() -> ManifestLoader.parse("contracts/demo.json", broken)).hasMessageContaining("undeclared metric 'nope'");
    }

    @Test
    void aCheckpointProtocolReplacesItsFieldsMergingObjectsAndLeavesTheChecks() {
        Manifest m = ManifestLoader.parse("demo.json", VALID.replace("\"protocol\": {}", "\"protocol\": {\"id\": \"a\", \"steps\": 3},"
                + " \"checkpoint_protocol\": {\"protocol\": {\"id\": \"b\"}, \"limitations\": [\"x\"],"
                + " \"checkpoint\": {\"files\": {\"b.bin\": \"2\"}, \"id\": \"q\"},"
                + " \"artifact\": {\"gone\": null, \"new\": 1}}").replace("\"artifact\": {}}",
                "\"checkpoint\": {\"files\": {\"a.bin\": \"1\"}, \"id\": \"p\", \"path\": \"x\"},"
                + " \"free_keys\": [\"checkpoint.files\"], \"artifact\": {\"gone\": 2}}"));
        Manifest c = ManifestLoader.forCheckpoint(m);
        assertThat(c.root().path("protocol").path("id").asText()).isEqualTo("b");
        assertThat(c.root().path("protocol").path("steps").asInt()).isEqualTo(3);
        assertThat(c.root().path("limitations").toString()).isEqualTo("[\"x\"]");
        assertThat(c.artifact().has("gone")).isFalse();
        assertThat(c.artifact().path("new").asInt()).isEqualTo(1);
        assertThat(c.checks()).isEqualTo(m.checks());
        assertThat(c.root().has("checkpoint_protocol")).isFalse();
        // A free key's object (its keys are file names) is replaced whole; the object above it merges.
        assertThat(c.root().path("checkpoint").toString()).isEqualTo("{\"files\":{\"b.bin\":\"2\"},\"id\":\"q\",\"path\":\"x\"}");
        assertThat(m.root().path("protocol").path("id").asText()).as("the manifest itself is unchanged").isEqualTo("a");
        assertThat(ManifestLoader.forCheckpoint(ManifestLoader.parse("demo.json", VALID)).root())
                .isEqualTo(ManifestLoader.parse("demo.json", VALID).root());
    }

    @Test
    void aCheckpointProtocolMayNotReplaceChecksOrMetrics() {
        assertThatThrownBy(() -> ManifestLoader.parse("contracts/demo.json", VALID.replace("\"protocol\": {}",
                "\"protocol\": {}, \"checkpoint_protocol\": {\"checks\": []}")))
                .hasMessageContaining("contracts/demo.json").hasMessageContaining("'checkpoint_protocol.checks'");
    }

    @Test
    void everyCommittedManifestLoads() {
        assertThat(ManifestLoader.loadAll(Path.of(System.getProperty("mechspec.contracts.dir", "contracts")))).isNotEmpty();
    }

    @Test
    void seedRunRejectsUndeclaredAndNonFiniteMetrics() {
        SeedRun run = new SeedRun(ManifestLoader.parse("demo.json", VALID), "c", 42, org.mechspec.compute.CpuBackend.INSTANCE, null);
        assertThatThrownBy(() -> run.metric("undeclared", 1.0)).hasMessageContaining("metric 'undeclared' is not declared");
        assertThatThrownBy(() -> run.metric("m", Double.NaN)).hasMessageContaining("must be finite");
        run.metric("m", 1.0);
        assertThatThrownBy(() -> run.metric("m", 2.0)).hasMessageContaining("recorded twice with different values");
    }

    /** A check judges only operations its paper declares: a misspelt one would never be answered ("not judged" ever after). */
    @Test
    void aCheckJudgingAnOperationThePaperDoesNotDeclareIsRejected() {
        String judging = VALID.replace("\"description\"", "\"judges\": [\"attentoin\"], \"description\"");
        assertThat(judging).isNotEqualTo(VALID);
        assertThatThrownBy(() -> ManifestLoader.parse("demo.json", judging)).isInstanceOf(ManifestException.class)
                .hasMessageContaining("check 'c' judges 'attentoin', which is not one of the paper's operations");
    }

    /**
     * A paper declares an operation of its own in its manifest, and from then on a worker's handshake may serve it and
     * its checks may judge it; a declaration that takes a name of mechspec's, another paper's, or describes no tensors
     * is one line naming the entry.
     */
    @Test
    void aPaperDeclaresItsOwnWorkerOperation() {
        String own = "{\"name\": \"demoown.scale\", \"precisions\": [\"f64\"], \"description\": \"x times 2\","
                + " \"inputs\": {\"x\": \"f64 [n]\"}, \"outputs\": {\"y\": \"f64 [n]\"}}";
        String declaring = VALID.replace("\"description\"", "\"judges\": [\"demoown.scale\"], \"description\"")
                .replace("\"artifact\": {}", "\"artifact\": {}, \"operations\": [\"attention\", " + own + "]");
        Manifest m = ManifestLoader.parse("demo.json", declaring);
        assertThat(m.operations()).containsExactly("attention", "demoown.scale");
        assertThat(org.mechspec.worker.Operations.precisions("demoown.scale")).containsExactly("f64");
        assertThatThrownBy(() -> ManifestLoader.parse("other.json", declaring.replace("\"paper\": \"demo\"", "\"paper\": \"other\"")))
                .isInstanceOf(ManifestException.class).hasMessageContaining("'demoown.scale' is declared by paper demo already");
        assertThatThrownBy(() -> ManifestLoader.parse("demo.json", declaring.replace("demoown.scale", "pnmix.decode")))
                .isInstanceOf(ManifestException.class).hasMessageContaining("is one of mechspec's own");
        assertThatThrownBy(() -> ManifestLoader.parse("demo.json", declaring.replace("\"outputs\": {\"y\": \"f64 [n]\"}", "\"outputs\": {}")))
                .isInstanceOf(ManifestException.class).hasMessageContaining("operations[1]").hasMessageContaining("must describe its outputs");
        assertThatThrownBy(() -> ManifestLoader.parse("demo.json", declaring.replace("\"attention\", {", "\"attentoin\", {")))
                .isInstanceOf(ManifestException.class).hasMessageContaining("operations[0]' names 'attentoin', which is no worker operation");
    }
}

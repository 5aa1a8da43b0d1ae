package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.mechspec.report.PaperRun;
import org.mechspec.spec.ManifestLoader;

/**
 * {@code mechspec validate} against test manifests shaped like the three seed files: the seed files validate, and
 * every hand-broken variant is caught with a line naming the JSON path. Bad input exits 2 with one line.
 */
@Tag("cli")
class ValidateCommandTest {
    static final Path FOLD_BIAS = Path.of(SyntheticManifests.FOLD_BIAS_SEED);
    static final Path PN_MIX = Path.of(SyntheticManifests.PN_MIX_SEED);
    static final Path OAL = Path.of(SyntheticManifests.OAL_SEED);

    @TempDir
    static Path dir;
    static Path contracts;

    @BeforeAll
    static void manifests() {
        contracts = SyntheticManifests.write(dir.resolve("contracts"));
    }

    static Cli validate(Path... files) {
        String[] args = new String[files.length + 3];
        args[0] = "validate";
        args[1] = "--contracts";
        args[2] = contracts.toString();
        for (int i = 0; i < files.length; i++) {
            args[i + 3] = files[i].toString();
        }
        return Cli.run(args);
    }

    @ParameterizedTest
    @ValueSource(strings = {SyntheticManifests.FOLD_BIAS_SEED, SyntheticManifests.PN_MIX_SEED, SyntheticManifests.OAL_SEED})
    void seedFilesValidate(String seedFile) {
        Cli r = validate(Path.of(seedFile));
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains(seedFile + ": valid ");
    }

    static Stream<Arguments> brokenVariants() {
        return Stream.of(
                broken("drop a per-seed metric", FOLD_BIAS, a -> obj(a, "/per_seed/1/metrics").remove("kkt_reference_error"),
                        "per_seed[1].metrics.kkt_reference_error: missing (reference has number)"),
                broken("drop a per-seed metric: the aggregate's n no longer matches", FOLD_BIAS,
                        a -> obj(a, "/per_seed/1/metrics").remove("kkt_reference_error"), "metrics.kkt_reference_error.n: 3, but the per-seed values give 2"),
                broken("drop a static block", FOLD_BIAS, a -> a.remove("evaluation_protocol"), "evaluation_protocol: missing (reference has object)"),
                broken("drop an aggregate", FOLD_BIAS, a -> obj(a, "/metrics").remove("model_calls"), "metrics.model_calls: missing"),
                broken("drop a statistic", FOLD_BIAS, a -> obj(a, "/metrics/model_calls").remove("n"), "metrics.model_calls.n: missing"),
                broken("change a per-seed metric's type", FOLD_BIAS, a -> obj(a, "/per_seed/0/metrics").put("logit_identity_error", "1.7e-15"),
                        "per_seed[0].metrics.logit_identity_error: expected number or boolean, got string"),
                broken("change a static type", FOLD_BIAS, a -> a.put("diagnostic_only", "true"), "diagnostic_only: expected boolean, got string"),
                broken("change an aggregate's type", FOLD_BIAS, a -> obj(a, "/metrics/drop_bias_output_error").put("std", "1.9"),
                        "metrics.drop_bias_output_error.std: expected number, got string"),
                broken("corrupt an aggregate by 1e-9 relative", FOLD_BIAS,
                        a -> obj(a, "/metrics/drop_bias_output_error").put("std", a.at("/metrics/drop_bias_output_error/std").asDouble() * (1 + 1e-9)),
                        "metrics.drop_bias_output_error.std: 1.8967155631012294, but the per-seed values give 1.8967155612045137"
                                + " (relative difference 1.00e-09 > 1e-12)"),
                broken("flip a check", FOLD_BIAS, a -> obj(a, "/per_seed/2/checks").put("offline_fit_is_frozen", false),
                        "per_seed[2].checks.offline_fit_is_frozen: check failed on seed 44"),
                broken("a check that is not a boolean", FOLD_BIAS, a -> obj(a, "/per_seed/0/checks").put("offline_fit_is_frozen", "yes"),
                        "per_seed[0].checks.offline_fit_is_frozen: expected boolean, got string"),
                broken("an undeclared check", FOLD_BIAS, a -> obj(a, "/per_seed/0/checks").put("invented_check", true),
                        "per_seed[0].checks.invented_check: 'invented_check' is not a check of fold-bias"),
                broken("an aggregate of an undeclared metric", FOLD_BIAS, a -> obj(a, "/metrics").putObject("bogus").put("mean", 1),
                        "metrics.bogus: 'bogus' is not a metric of fold-bias"),
                broken("a seed the manifest does not run", FOLD_BIAS, a -> {
                    ((ArrayNode) a.get("seeds")).set(2, 7);
                    obj(a, "/per_seed/2").put("seed", 7);
                }, "per_seed[2].seed: seed 7 is not a seed of fold-bias [42, 43, 44]"),
                broken("two seed lists disagree", FOLD_BIAS, a -> ((ArrayNode) a.at("/evaluation_protocol/seeds")).remove(2),
                        "evaluation_protocol.seeds: lists seeds [42, 43], but the per-seed values hold seeds [42, 43, 44]"),
                broken("per-seed array and seed list disagree", FOLD_BIAS, a -> obj(a, "/per_seed/2").put("seed", 45),
                        "seeds: lists seeds [42, 43, 44], but the per-seed values hold seeds [42, 43, 45]"),
                broken("a seed twice", FOLD_BIAS, a -> obj(a, "/per_seed/2").put("seed", 43), "per_seed[2]: seed 43 appears twice in per_seed"),
                broken("a per-seed element that is not an object", FOLD_BIAS, a -> ((ArrayNode) a.get("per_seed")).set(1, 43),
                        "per_seed[1]: expected object, got number"),
                broken("empty provenance", FOLD_BIAS, a -> obj(a, "/provenance").put("commit", ""),
                        "provenance.commit: provenance ($commit) is empty or not a string"),
                broken("no provenance", FOLD_BIAS, a -> a.remove("provenance"), "provenance.commit: missing (reference has string)"),
                broken("no executed sources", FOLD_BIAS, a -> obj(a, "/provenance").putObject("executed_source_sha256"),
                        "provenance.executed_source_sha256: provenance ($sources) is empty or not an object"),
                broken("corrupt a byte count", PN_MIX, a -> obj(a, "/metrics/key_bytes").put("mean", 15109),
                        "metrics.key_bytes.mean: 15109, but the per-seed values give 15108"),
                broken("flip a check recorded among the metrics", PN_MIX, a -> obj(a, "/runs/0/metrics").put("mask_unchanged_after_decode", false),
                        "runs[0].metrics.mask_unchanged_after_decode: false: the check of this name fails on seed 42"),
                broken("drop a listed per-seed metric", PN_MIX, a -> obj(a, "/runs/1/metrics").remove("key_bytes"),
                        "runs[1].metrics.key_bytes: missing (reference has number)"),
                broken("remove a negative_result sentence", OAL, a -> a.put("negative_result",
                        "Three seeds on two 32-token test blocks do not establish a capability improvement."),
                        "negative_result: does not state the contradicting seed: "
                                + "'Seed 44 OAL test PPL 43.2233056846 is worse than matched softmax+LoRA 43.1286630833.'"),
                broken("invent a negative result", OAL, a -> a.put("negative_result", "Seed 42 was bad. " + a.get("negative_result").asText()),
                        "negative_result: 'Seed 42 was bad. Seed 44"),
                broken("two per-seed arrays disagree", OAL, a -> obj(a, "/seed_results/2").put("oal_test_ppl", 43.0),
                        "seed_results[2].oal_test_ppl: 43.0, but the per-seed values give 43.223305684618616"),
                broken("corrupt a single $stat figure", OAL, a -> obj(a, "/metrics").put("oal_validation_output_mse_mean", 0.0305),
                        "metrics.oal_validation_output_mse_mean: 0.0305, but the per-seed values give 0.030467448756098747"),
                broken("corrupt a ci95", OAL, a -> obj(a, "/aggregate_metrics/oal_test_ppl").put("ci95", 1.2),
                        "aggregate_metrics.oal_test_ppl.ci95: 1.2, but the per-seed values give 1.21959"),
                broken("a per-seed value that is null", OAL, a -> obj(a, "/per_seed/0").putNull("oal_test_ppl"),
                        "per_seed[0].oal_test_ppl: expected number or boolean, got null"),
                broken("drop a per-seed value", OAL, a -> obj(a, "/per_seed/0").remove("oal_test_ppl"),
                        "per_seed[0].oal_test_ppl: missing (reference has number)"),
                broken("change per-seed values so the aggregates no longer follow", OAL, a -> {
                    obj(a, "/per_seed/1").put("softmax_test_nll", 3.8);
                    obj(a, "/seed_results/1").put("softmax_test_nll", 3.8);
                }, "aggregate.softmax_test_nll.mean: 3.77255646387736, but the per-seed values give 3.7837"));
    }

    private static Arguments broken(String name, Path seedFile, Consumer<ObjectNode> change, String expectedLine) {
        return Arguments.of(name, seedFile, change, expectedLine);
    }

    static ObjectNode obj(ObjectNode root, String pointer) {
        return (ObjectNode) root.at(pointer);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("brokenVariants")
    void brokenVariantIsReportedAtItsPath(String name, Path seedFile, Consumer<ObjectNode> change, String expectedLine) {
        Path broken = Artifacts.edit(seedFile, dir.resolve("broken-" + name.replaceAll("\\W+", "-") + ".json"), change);
        Cli r = validate(broken);
        assertThat(r.code()).as(r.toString()).isEqualTo(1);
        assertThat(r.out()).as(r.toString()).contains(broken + ": " + expectedLine);
        assertThat(r.out().lines()).allMatch(l -> l.startsWith(broken + ": "));
        assertThat(r.err()).isEmpty();
    }

    // --- artifacts mechspec writes (demo paper, no seed file: the template's own layout is required)

    static Path demoArtifact(String name) {
        var manifest = ManifestLoader.load(contracts.resolve("demo.json"));
        return Artifacts.write(dir.resolve(name), Artifacts.render(manifest, Artifacts.demoRun("cpu", 42, 43, 44), "c0ffee"));
    }

    @Test
    void renderedArtifactValidatesWithItsNegativeResult() {
        Path file = demoArtifact("demo.cpu.json");
        Cli r = validate(file);
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(Artifacts.read(file).get("negative_result").asText())
                .isEqualTo("Seed 43: lhs 2.0000000000 is not below rhs 1.5000000000. Three seeds are few.");
    }

    static Stream<Arguments> brokenDemoVariants() {
        return Stream.of(
                Arguments.of("per-seed value edited", (Consumer<ObjectNode>) a -> obj(a, "/per_seed/0/metrics").put("err", 1e-13),
                        "per_seed[0].metrics.err: 1.0E-13, but rendering the mechspec block gives 4.2000000000000004E-14"),
                Arguments.of("metric dropped from one seed", (Consumer<ObjectNode>) a -> obj(a, "/per_seed/1/metrics").remove("err"),
                        "per_seed[1].metrics.err: missing (rendering the mechspec block gives number)"),
                Arguments.of("$check position dropped from one seed", (Consumer<ObjectNode>) a -> obj(a, "/per_seed/1").remove("bounded"),
                        "per_seed[1].bounded: missing (rendering the mechspec block gives boolean)"),
                Arguments.of("per-seed provenance retyped", (Consumer<ObjectNode>) a -> obj(a, "/per_seed/2").put("device", 7),
                        "per_seed[2].device: expected string, got number"),
                Arguments.of("$first_seed not the first seed", (Consumer<ObjectNode>) a -> a.put("first_seed", 43),
                        "first_seed: 43, but rendering the mechspec block gives 42"),
                Arguments.of("one seed's value placed elsewhere edited", (Consumer<ObjectNode>) a -> a.put("first_err", 1.0),
                        "first_err: 1.0, but rendering the mechspec block gives 4.2000000000000004E-14"),
                Arguments.of("one seed's check placed elsewhere flipped", (Consumer<ObjectNode>) a -> a.put("first_bounded", false),
                        "first_bounded: false, but rendering the mechspec block gives true"),
                Arguments.of("second $seed field of an element disagrees", (Consumer<ObjectNode>) a -> obj(a, "/per_seed/1").put("initialization_seed", 44),
                        "per_seed[1].initialization_seed: 44, but rendering the mechspec block gives 43"),
                Arguments.of("mechspec block edited", (Consumer<ObjectNode>) a -> obj(a, "/mechspec/seeds/42/metrics").put("err", 1.0),
                        "provenance.records: does not match the SHA-256 of the mechspec block"),
                Arguments.of("block and rendered check disagree", (Consumer<ObjectNode>) a -> obj(a, "/mechspec/seeds/44/checks").put("counted", false),
                        "per_seed[2].checks.counted: true, but rendering the mechspec block gives false"),
                Arguments.of("flipped $check position", (Consumer<ObjectNode>) a -> obj(a, "/per_seed/1").put("bounded", false),
                        "per_seed[1].bounded: false, but rendering the mechspec block gives true"),
                Arguments.of("improvement claimed against a contradicting seed", (Consumer<ObjectNode>) a -> a.put("claims_improvement", true),
                        "claims_improvement: true, but rendering the mechspec block gives false"),
                Arguments.of("template layout: provenance dropped", (Consumer<ObjectNode>) a -> a.remove("provenance"),
                        "provenance: missing (rendering the mechspec block gives object)"),
                Arguments.of("template layout: $stat figure dropped", (Consumer<ObjectNode>) a -> a.remove("err_max"),
                        "err_max: missing (rendering the mechspec block gives number)"),
                Arguments.of("block of another paper", (Consumer<ObjectNode>) a -> obj(a, "/mechspec").put("paper", "other"),
                        "mechspec.paper: 'other', but the artifact is read as demo"),
                Arguments.of("block without commit", (Consumer<ObjectNode>) a -> obj(a, "/mechspec").put("commit", ""),
                        "mechspec.commit: provenance (commit) is missing"),
                Arguments.of("a key added to a static block", (Consumer<ObjectNode>) a -> obj(a, "/provenance").put("note", "hand-edited"),
                        "provenance.note: not in the rendering of the mechspec block"),
                Arguments.of("block with other seeds", (Consumer<ObjectNode>) a -> obj(a, "/mechspec/seeds").remove("44"),
                        "seeds: [42,43,44], but rendering the mechspec block gives [42,43]"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("brokenDemoVariants")
    void brokenMechspecArtifactIsReported(String name, Consumer<ObjectNode> change, String expectedLine) {
        Path broken = Artifacts.edit(demoArtifact("demo-ok.json"), dir.resolve("demo-" + name.replaceAll("\\W+", "-") + ".json"), change);
        Cli r = validate(broken);
        assertThat(r.code()).as(r.toString()).isEqualTo(1);
        assertThat(r.out()).as(r.toString()).contains(broken + ": " + expectedLine);
    }

    @Test
    void ourArtifactMustHoldWhatTheTemplateAddsToTheSeedLayout() {
        // The seed file lacks per-seed runtime, ci95, ci95_t and provenance.jvm and still validates (above);
        // an artifact mechspec rendered from the same per-seed values must have them.
        var manifest = ManifestLoader.load(contracts.resolve("fold-bias.json"));
        ObjectNode seed = Artifacts.read(FOLD_BIAS);
        PaperRun run = new PaperRun("fold-bias", "cuda");
        run.device = "NVIDIA A100-SXM4-80GB";
        seed.get("per_seed").forEach(row -> {
            PaperRun.SeedRecord r = run.seed(row.get("seed").asLong());
            row.get("metrics").fields().forEachRemaining(e -> r.metrics.put(e.getKey(),
                    e.getValue().isIntegralNumber() ? (Object) e.getValue().asLong() : (Object) e.getValue().asDouble()));
            row.get("checks").fields().forEachRemaining(e -> r.outcome(e.getKey(), e.getValue().asBoolean()));
        });
        Path ours = Artifacts.write(dir.resolve("fold-bias.cuda.json"), new org.mechspec.report.ArtifactRenderer(manifest, run, "c0ffee",
                Map.of("src/main/java/org/mechspec/foldbias/FoldBias.java", "ab"), "Test VM 17").render());
        assertThat(validate(ours).code()).as(validate(ours).toString()).isZero();
        Path noCi = Artifacts.edit(ours, dir.resolve("fold-bias-no-ci.json"), a -> obj(a, "/metrics/drop_bias_output_error").remove("ci95"));
        assertThat(validate(noCi).out()).contains(noCi + ": metrics.drop_bias_output_error.ci95: missing");
        Path noJvm = Artifacts.edit(ours, dir.resolve("fold-bias-no-jvm.json"), a -> obj(a, "/provenance").remove("jvm"));
        assertThat(validate(noJvm).out()).contains(noJvm + ": provenance.jvm: missing (rendering the mechspec block gives string)");
        Path noRuntime = Artifacts.edit(ours, dir.resolve("fold-bias-no-runtime.json"), a -> obj(a, "/per_seed/0").remove("runtime"));
        assertThat(validate(noRuntime).code()).isEqualTo(1);
    }

    @Test
    void seedFileWithItsPerSeedElementsInAnotherOrderValidates() {
        Path reversed = Artifacts.edit(FOLD_BIAS, dir.resolve("fold-bias-reversed.json"), a -> {
            ArrayNode rows = (ArrayNode) a.get("per_seed");
            JsonNode first = rows.remove(0);
            rows.add(first);
        });
        Cli r = validate(reversed);
        assertThat(r.code()).as(r.toString()).isZero();
    }

    @Test
    void artifactWithoutBlockOrSeedFileIsRefused() {
        Path bare = Artifacts.edit(demoArtifact("demo-bare.json"), dir.resolve("demo-bare-no-block.json"), a -> a.remove("mechspec"));
        Cli r = validate(bare);
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out()).contains(bare + ": (root): no mechspec block, and demo names no seed file whose layout it could follow");
    }

    @Test
    void artifactMadeWithAnotherManifestVersionIsReported() throws Exception {
        Path file = demoArtifact("demo-old-manifest.json");
        Path changed = Files.createDirectories(dir.resolve("contracts-changed"));
        Files.writeString(changed.resolve("demo.json"), SyntheticManifests.DEMO.replace("Three seeds are few.", "Few seeds."));
        Cli r = Cli.run("validate", "--contracts", changed.toString(), file.toString());
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out()).contains(file + ": mechspec.manifest_sha256: made with another version of " + changed.resolve("demo.json"))
                .contains(file + ": negative_result: \"Seed 43: lhs 2.0000000000 is not below rhs 1.5000000000. Three seeds are few.\","
                        + " but rendering the mechspec block gives \"Seed 43: lhs 2.0000000000 is not below rhs 1.5000000000. Few seeds.\"")
                // the block itself is untouched: the edited manifest is the finding, not a changed block
                .doesNotContain("changed after rendering");
    }

    @Test
    void aBlockEditedAfterRenderingIsStillCaughtByItsHash() {
        Path edited = Artifacts.edit(demoArtifact("demo-edited.json"), dir.resolve("demo-edited-block.json"),
                a -> ((com.fasterxml.jackson.databind.node.ObjectNode) a.path("mechspec").path("seeds").path("42").path("runtime"))
                        .put("wall_seconds", 1.5));
        Cli r = validate(edited);
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out()).contains("the block was changed after rendering").doesNotContain("made with another version");
    }

    @Test
    void failedCheckInARenderedArtifactIsAFinding() {
        PaperRun run = Artifacts.demoRun("cpu", 42, 43, 44);
        run.seed(43).outcome("counted", false);
        Path file = Artifacts.write(dir.resolve("demo-failed.json"),
                Artifacts.render(ManifestLoader.load(contracts.resolve("demo.json")), run, "c0ffee"));
        Cli r = validate(file);
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out()).contains(file + ": mechspec.seeds.43.checks.counted: check failed on seed 43");
    }

    // --- bad input: one line on stderr, exit 2

    @Test
    void missingFile() {
        Cli r = validate(dir.resolve("nope.json"));
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: " + dir.resolve("nope.json") + ": no such file");
    }

    @Test
    void invalidJson() throws Exception {
        Path f = Files.writeString(dir.resolve("bad.json"), "{\"method\": \"fold-bias\",\n \"seeds\": [42, }");
        Cli r = validate(f);
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("mechspec: " + f + ": invalid JSON at line 2, column").hasLineCount(1);
    }

    @Test
    void deeplyNestedJsonIsOneLineNotAStackTrace() throws Exception {
        Path f = Files.writeString(dir.resolve("deep.json"), "[".repeat(100_000));
        Cli r = validate(f);
        assertThat(r.code()).as(r.toString()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: " + f + ": not JSON: nested deeper than 1000 levels");
    }

    @Test
    void binaryFileIsNotUtf8Text() throws Exception {
        Path f = Files.write(dir.resolve("binary.json"), new byte[] {(byte) 0x89, 'P', 'N', 'G', (byte) 0xff, (byte) 0xfe, 0, 1});
        Cli r = validate(f);
        assertThat(r.code()).as(r.toString()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: " + f + ": not UTF-8 text");
    }

    @Test
    void aParseErrorWithoutLocationStillNamesTheFile() {
        assertThat(ArtifactFile.whyNotJson(new com.fasterxml.jackson.core.JsonParseException(null, "Unexpected end")))
                .isEqualTo("not JSON: Unexpected end");
    }

    @Test
    void trailingGarbageIsInvalidJson() throws Exception {
        Path f = Files.writeString(dir.resolve("trailing.json"), "{\"method\": \"fold-bias\"} x");
        assertThat(validate(f).err()).contains(f + ": invalid JSON at line 1");
    }

    @Test
    void notAnObject() throws Exception {
        Path f = Files.writeString(dir.resolve("array.json"), "[1, 2]");
        Cli r = validate(f);
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: " + f + ": an artifact must be a JSON object, got array");
    }

    @Test
    void unknownPaper() throws Exception {
        Path f = Files.writeString(dir.resolve("unknown.json"), "{\"method\": \"no-such-paper\", \"manifest_ref\": \"x:nope\"}");
        Cli r = validate(f);
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: " + f + ": unknown paper: no manifest in " + contracts
                + " for no-such-paper or nope (known: demo, fold-bias, oal, pn-mix)");
    }

    @Test
    void paperCannotBeTold() throws Exception {
        Path f = Files.writeString(dir.resolve("anonymous.json"), "{\"seeds\": [42]}");
        Cli r = validate(f);
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains(f + ": cannot tell the paper");
    }

    @Test
    void paperFoundByArxivIdAndManifestRef() {
        // Each edit also breaks the layout, which shows the file was read as the right paper.
        Path byArxiv = Artifacts.edit(OAL, dir.resolve("oal-arxiv.json"), a -> a.remove("manifest_ref"));
        assertThat(validate(byArxiv).out()).contains(byArxiv + ": manifest_ref: missing (reference has string)");
        Path byRef = Artifacts.edit(PN_MIX, dir.resolve("pn-mix-ref.json"), a -> a.remove("method"));
        assertThat(validate(byRef).out()).contains(byRef + ": method: missing (reference has string)");
    }

    @Test
    void severalFilesGiveTheWorstExitCodeAndALineEach() throws Exception {
        Path broken = Artifacts.edit(FOLD_BIAS, dir.resolve("fb-broken.json"), a -> a.remove("fixture_demo"));
        Cli findings = validate(FOLD_BIAS, broken);
        assertThat(findings.code()).isEqualTo(1);
        assertThat(findings.out()).contains(FOLD_BIAS + ": valid fold-bias artifact", broken + ": 1 finding(s)");
        Cli unreadable = validate(FOLD_BIAS, dir.resolve("missing.json"), broken);
        assertThat(unreadable.code()).isEqualTo(2);
        assertThat(unreadable.out()).contains(FOLD_BIAS + ": valid", broken + ": fixture_demo: missing");
    }

    @Test
    void malformedManifestIsNamedWithItsField() throws Exception {
        Path bad = Files.createDirectories(dir.resolve("bad-contracts"));
        Files.writeString(bad.resolve("x.json"), "{\"paper\": \"x\", \"seeds\": \"42\"}");
        Cli r = Cli.run("validate", "--contracts", bad.toString(), FOLD_BIAS.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: " + bad.resolve("x.json") + ": field 'seeds' must be an array");
    }

    @Test
    void usageErrorsExitTwoWithOneLine() {
        Cli none = Cli.run("validate");
        assertThat(none.code()).isEqualTo(2);
        assertThat(none.err()).hasLineCount(1).contains("validate --help");
        Cli noCommand = Cli.run();
        assertThat(noCommand.code()).isEqualTo(2);
        assertThat(noCommand.err().strip()).isEqualTo("mechspec: name a command: run, validate, merge, diff, gpu-check, slurm, new-paper, stress, bench (see: mechspec --help)");
        Cli unknown = Cli.run("frobnicate");
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(Cli.run("--help").code()).isZero();
        for (String command : new String[] {"run", "validate", "merge", "diff"}) {
            Cli help = Cli.run(command, "--help");
            assertThat(help.code()).isZero();
            assertThat(help.out()).contains("Usage: mechspec " + command);
        }
        assertThat(Cli.run("--help").out()).contains("run", "validate", "merge", "diff");
    }
}

package org.mechspec.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Test manifests whose artifact templates put the dynamic parts where the three seed files have them (the real
 * manifests are written with each paper), plus a small "demo" paper with hypotheses for merge and diff. They cover
 * every validator rule without depending on which papers a branch has.
 */
final class SyntheticManifests {
    static final ObjectMapper JSON = new ObjectMapper();

    static final String FOLD_BIAS_SEED = "fixtures/seeds/fold-bias.000_20bc18518796452b.json";
    static final String PN_MIX_SEED = "fixtures/seeds/pn-mix.002_9d6477e26dc5885a.json";
    static final String OAL_SEED = "fixtures/seeds/oal.004_29e8e1ddd5ac2b2e.json";

    private SyntheticManifests() {
    }

    /** Writes fold-bias.json, pn-mix.json, oal.json and demo.json into {@code dir} and returns it. */
    static Path write(Path dir) {
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("fold-bias.json"), foldBias());
            Files.writeString(dir.resolve("pn-mix.json"), PN_MIX);
            Files.writeString(dir.resolve("oal.json"), oal());
            Files.writeString(dir.resolve("demo.json"), DEMO);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The seed file's static parts with its dynamic parts replaced by template forms; like the real manifest, the
     * template adds to the seed's layout (per-seed runtime, ci95, ci95_t, provenance.jvm).
     */
    private static String foldBias() {
        ObjectNode m = header("fold-bias", "2610.36520", FOLD_BIAS_SEED);
        m.putArray("free_keys").add("provenance.executed_source_sha256");
        ArrayNode checks = m.putArray("checks");
        List.of("rank_one_logit_identity_reference", "context_projection_mean_constraint", "ridge_constrained_kkt_reference",
                "keys_really_rounded_before_value_refit", "rounded_value_fit_normal_equations", "same_value_output_error_bound",
                "dropping_bias_changes_attention", "offline_fit_is_frozen").forEach(c -> checks.addObject().put("name", c).put("description", "d"));
        ArrayNode metrics = m.putArray("metrics");
        List.of("logit_identity_error", "projection_mean_error", "kkt_reference_error", "value_normal_equation_error",
                "cache_rounding_attention_gap", "drop_bias_output_error", "minimum_output_bound_slack", "model_calls")
                .forEach(n -> metrics.addObject().put("name", n));
        ObjectNode a = Artifacts.read(java.nio.file.Path.of(FOLD_BIAS_SEED));
        ((ObjectNode) a.get("dataset")).put("revision", "$dataset_fingerprint");
        a.put("seed", "$seeds");
        a.put("seeds", "$seeds");
        ((ObjectNode) a.get("evaluation_protocol")).put("seeds", "$seeds");
        ObjectNode row = JSON.createObjectNode().put("seed", "$seed");
        row.putObject("metrics").put("$metrics", "*");
        row.put("checks", "$checks").put("runtime", "$runtime").put("execution_device", "$backend").put("execution_accelerator", "$device");
        a.putObject("per_seed").set("$each_seed", row);
        ObjectNode aggregate = a.putObject("metrics").putObject("$aggregate");
        aggregate.putArray("stats").add("mean").add("std").add("n").add("ci95").add("ci95_t");
        aggregate.put("metrics", "*");
        a.putObject("provenance").put("commit", "$commit").put("artifact_path", "$artifact_path").put("accelerator", "$device")
                .put("jvm", "$jvm").put("executed_source_sha256", "$sources").put("raw_runner_artifact_sha256", "$records_sha256")
                .put("dataset_fingerprint", "$dataset_fingerprint");
        m.set("artifact", a);
        return m.toString();
    }

    private static ObjectNode header(String paper, String arxivId, String seedArtifact) {
        ObjectNode m = JSON.createObjectNode();
        m.put("paper", paper).put("arxiv_id", arxivId).put("title", paper + " (test manifest)");
        m.putArray("seeds").add(42).add(43).add(44);
        m.putObject("dataset");
        m.putObject("protocol");
        m.putObject("claim_policy");
        m.putArray("limitations");
        m.putArray("sources").add("src/main/java/org/mechspec/" + paper.replace("-", ""));
        m.put("seed_artifact", seedArtifact);
        return m;
    }

    private static final String PN_MIX = """
            {"paper": "pn-mix", "arxiv_id": "2610.19605", "title": "pn-mix (test manifest)", "seeds": [42, 43, 44],
             "dataset": {}, "protocol": {}, "claim_policy": {}, "limitations": [], "sources": ["src/main/java/org/mechspec/pnmix"],
             "seed_artifact": "fixtures/seeds/pn-mix.002_9d6477e26dc5885a.json",
             "checks": [{"name": "mask_unchanged_after_decode", "description": "d"}],
             "metrics": [{"name": "key_mse"}, {"name": "value_mse"}, {"name": "attention_kl"}, {"name": "attention_output_mse"},
               {"name": "attention_output_cosine"}, {"name": "sink_key_max_error"}, {"name": "saliency_computations"},
               {"name": "actual_attention_calls"}, {"name": "online_vs_final_cache_attention_max_delta"}, {"name": "key_bytes"},
               {"name": "value_bytes"}, {"name": "persistent_cache_bytes"}, {"name": "quantized_tokens"}, {"name": "sink_tokens"},
               {"name": "residual_tokens"}, {"name": "key_bits_per_element_including_sink_residual"},
               {"name": "temporary_dequantized_cache_included"}, {"name": "mask_unchanged_after_decode"}],
             "artifact": {
               "manifest_ref": "reproduction:pn-mix",
               "seeds": "$seeds",
               "metrics": {"$aggregate": {"stats": ["mean", "std", "n"], "metrics": "*"}},
               "runs": {"$each_seed": {"seed": "$seed",
                 "metrics": {"$metrics": ["key_mse", "value_mse", "attention_kl", "attention_output_mse", "attention_output_cosine",
                   "sink_key_max_error", "saliency_computations", "mask_unchanged_after_decode", "actual_attention_calls",
                   "online_vs_final_cache_attention_max_delta", "key_bytes", "value_bytes", "persistent_cache_bytes",
                   "quantized_tokens", "sink_tokens", "residual_tokens", "key_bits_per_element_including_sink_residual",
                   "temporary_dequantized_cache_included"]},
                 "runtime": {"device_kind": "$backend", "accelerator_model": "$device"}}},
               "provenance": {"commit": "$commit", "artifact_path": "$artifact_path", "dataset_fingerprint": "$dataset_fingerprint"}}}
            """;

    static final List<String> OAL_METRICS = List.of("softmax_test_ppl", "oal_test_ppl", "softmax_test_nll", "oal_test_nll",
            "softmax_parameter_delta_l2", "oal_parameter_delta_l2", "oal_validation_output_mse", "global_validation_output_mse",
            "recurrent_dense_max_error");

    /** oal: per-seed values in two arrays, single figures as $stat, two aggregate blocks, two hypotheses. */
    private static String oal() {
        ObjectNode m = header("oal", "2610.13674", OAL_SEED);
        m.putArray("free_keys").add("raw_files_sha256").add("provenance.raw_files_sha256");
        m.putArray("checks").addObject().put("name", "recurrent_matches_dense").put("description", "d");
        ArrayNode metrics = m.putArray("metrics");
        OAL_METRICS.forEach(n -> metrics.addObject().put("name", n));
        ArrayNode h = m.putArray("hypotheses");
        h.addObject().put("lhs", "oal_test_ppl").put("rhs", "softmax_test_ppl")
                .put("sentence", "Seed {seed} OAL test PPL {lhs} is worse than matched softmax+LoRA {rhs}.");
        h.addObject().put("lhs", "oal_validation_output_mse").put("rhs", "global_validation_output_mse")
                .put("sentence", "Seed {seed} OAL validation output MSE {lhs} is not below the global baseline {rhs}.");
        m.put("hypothesis_caveat", "Three seeds on two 32-token test blocks do not establish a capability improvement.");
        ObjectNode a = m.putObject("artifact");
        a.put("paper", "2610.13674");
        a.put("seeds", "$seeds");
        a.put("code_commit", "$commit");
        a.put("accelerator", "$device");
        a.put("device", "$backend");
        ObjectNode figures = a.putObject("metrics");
        for (String n : List.of("softmax_test_ppl", "oal_test_ppl", "softmax_test_nll", "oal_test_nll")) {
            ObjectNode stats = figures.putObject(n);
            stats.putObject("mean").putObject("$stat").put("metric", n).put("stat", "mean");
            stats.putObject("sample_std").putObject("$stat").put("metric", n).put("stat", "std");
        }
        for (String n : List.of("oal_validation_output_mse_mean", "global_validation_output_mse_mean", "recurrent_dense_max_error_max",
                "softmax_parameter_delta_l2_mean", "oal_parameter_delta_l2_mean")) {
            int cut = n.lastIndexOf('_');
            figures.putObject(n).putObject("$stat").put("metric", n.substring(0, cut)).put("stat", n.substring(cut + 1));
        }
        ObjectNode perSeed = JSON.createObjectNode();
        perSeed.put("seed", "$seed");
        OAL_METRICS.forEach(n -> perSeed.putObject(n).putObject("$metric").put("name", n));
        a.putObject("per_seed").set("$each_seed", perSeed);
        ObjectNode aggregate = a.putObject("aggregate").putObject("$aggregate");
        aggregate.putArray("stats").add("mean").add(JSON.createObjectNode().put("sample_std", "std"));
        aggregate.put("metrics", "*");
        a.put("negative_result", "$negative_result");
        a.putObject("provenance").put("code_commit", "$commit").put("dataset_fingerprint", "$dataset_fingerprint");
        a.putObject("seed_results").set("$each_seed", perSeed.deepCopy());
        ObjectNode aggregateMetrics = a.putObject("aggregate_metrics").putObject("$aggregate");
        aggregateMetrics.putArray("stats").add("mean").add("std").add("ci95").add("n");
        aggregateMetrics.put("metrics", "*");
        return m.toString();
    }

    /** A paper without seed file: the template's own layout is required. Has a hypothesis and every form. */
    static final String DEMO = """
            {"paper": "demo", "arxiv_id": "0000.00001", "title": "demo", "seeds": [42, 43, 44],
             "dataset": {"id": "none"}, "protocol": {"id": "none"}, "claim_policy": {"tier": "l1_mechanism"}, "limitations": [],
             "sources": ["src/main/java/org/mechspec/demo"],
             "checks": [{"name": "bounded", "description": "err is small"}, {"name": "counted", "description": "bytes are exact"}],
             "metrics": [{"name": "err", "tolerance": {"abs": 1e-12, "rel": 0}}, {"name": "bytes"}, {"name": "lhs"}, {"name": "rhs"}],
             "hypotheses": [{"lhs": "lhs", "rhs": "rhs", "sentence": "Seed {seed}: lhs {lhs} is not below rhs {rhs}."}],
             "hypothesis_caveat": "Three seeds are few.",
             "artifact": {
               "method": "demo",
               "seeds": "$seeds",
               "per_seed": {"$each_seed": {"seed": "$seed", "metrics": {"$metrics": "*"}, "checks": "$checks", "runtime": "$runtime",
                                           "bounded": {"$check": {"name": "bounded"}}, "device": "$backend", "initialization_seed": "$seed"}},
               "first_seed": "$first_seed",
               "first_bounded": {"$check": {"name": "bounded", "seed": "first"}},
               "first_err": {"$metric": {"name": "err", "seed": "first"}},
               "metrics": {"$aggregate": {"stats": ["mean", "std", "n", "ci95", "ci95_t", "min", "max"], "metrics": "*"}},
               "err_max": {"$stat": {"metric": "err", "stat": "max"}},
               "negative_result": "$negative_result",
               "claims_improvement": "$claims_improvement",
               "diagnostic_only": true,
               "provenance": {"commit": "$commit", "jvm": "$jvm", "accelerator": "$device", "sources": "$sources",
                              "records": "$records_sha256", "dataset_fingerprint": "$dataset_fingerprint", "path": "$artifact_path"}}}
            """;
}

package org.mechspec.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Rectangle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.IntervalBarRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.data.category.CategoryDataset;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.category.DefaultIntervalCategoryDataset;
import org.jfree.svg.SVGGraphics2D;

/**
 * SVG plots of each paper's headline comparison, drawn from the per-seed metrics of an artifact's mechspec block.
 * Every value drawn is also listed in the SVG's {@code <metadata id="mechspec-plot-data">} as
 * {@code series,category,metric,value} lines (value as the artifact writes it). A plot whose metric is missing for
 * some seed is not drawn; papers without a plot here (kernels, unknown keys) give none.
 */
final class Plots {
    static final String DATA_ID = "mechspec-plot-data";
    private static final int WIDTH = 800;
    private static final int HEIGHT = 500;

    /** One series: its legend name and the per-seed metric it reads. */
    record Series(String label, String metric) {
    }

    /** Grouped bars per seed, or (interval) one floating bar per seed from the first series' value to the second's. */
    record Chart(String file, String title, String valueAxis, boolean interval, List<Series> series) {
    }

    private static Chart bars(String file, String title, String valueAxis, Series... series) {
        return new Chart(file, title, valueAxis, false, List.of(series));
    }

    static final Map<String, List<Chart>> CHARTS = Map.of(
            "oal", List.of(
                    bars("test-ppl.svg", "oal: test perplexity per seed, softmax + LoRA vs OAL",
                            "test perplexity (per predicted byte)",
                            new Series("softmax + LoRA", "softmax_test_ppl"), new Series("OAL", "oal_test_ppl")),
                    new Chart("nll-difference-interval.svg",
                            "oal: bootstrap interval of OAL - softmax test NLL per seed (0 = no difference)",
                            "OAL - softmax test NLL (nats per byte)", true, List.of(
                                    new Series("bootstrap interval", "oal_minus_softmax_nll_ci_low"),
                                    new Series("bootstrap interval", "oal_minus_softmax_nll_ci_high"))),
                    bars("validation-mse.svg", "oal: validation output MSE per seed, OAL vs global quadratic baseline",
                            "validation output MSE (squared activation units)",
                            new Series("OAL", "oal_validation_output_mse"),
                            new Series("global quadratic baseline", "global_validation_output_mse"))),
            "pn-mix", List.of(
                    bars("attention-kl.svg",
                            "pn-mix: attention KL per seed, saliency mask vs random masks vs uniform 2-bit keys",
                            "attention KL from the fp16-truth reference (nats)",
                            new Series("saliency mask (3/1-bit keys)", "attention_kl"),
                            new Series("random masks (mean of 8)", "random_mask_attention_kl_mean"),
                            new Series("uniform 2-bit keys (equal bytes)", "uniform_2bit_attention_kl")),
                    bars("cache-bytes.svg", "pn-mix: persistent cache bytes per component per seed", "bytes",
                            new Series("quantized keys (codes + scale/zero)", "quantized_key_bytes"),
                            new Series("keys (with fp16 sink and residual)", "key_bytes"),
                            new Series("values", "value_bytes"),
                            new Series("persistent cache total", "persistent_cache_bytes"))),
            "fold-bias", List.of(
                    bars("output-error.svg", "fold-bias: mean output error per seed, bias dropped vs bias folded",
                            "mean output error (L2 norm of output difference)",
                            new Series("bias dropped", "drop_bias_output_error"),
                            new Series("bias folded into fp16 keys", "folded_output_error")),
                    bars("bound-slack.svg",
                            "fold-bias: output-error bound minus measured error, minimum over test queries per seed",
                            "bound - measured error (L2 norm of output difference)",
                            new Series("minimum slack (>= 0: bound holds)", "minimum_output_bound_slack")),
                    bars("compaction-error.svg",
                            "fold-bias: output error vs full attention per seed, compacted vs arbitrary key sets",
                            "mean output error (L2 norm of output difference)",
                            new Series("compacted cache (top-weight keys)", "compaction_output_error"),
                            new Series("best of 8 arbitrary key sets", "arbitrary_selection_output_error"))));

    private Plots() {
    }

    /** Writes the plots of the artifact's paper into {@code dir/<paper>/} and returns the files written. */
    public static List<Path> write(JsonNode artifact, Path dir) {
        System.setProperty("java.awt.headless", "true");
        JsonNode block = artifact.path("mechspec");
        String paper = block.path("paper").asText();
        List<Path> written = new ArrayList<>();
        for (Chart chart : CHARTS.getOrDefault(paper, List.of())) {
            List<String[]> points = points(chart, block.path("seeds"));
            if (points.isEmpty()) {
                continue;
            }
            Path file = dir.resolve(paper).resolve(chart.file());
            try {
                AtomicFiles.write(file, svg(paper, chart, points));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + file, e);
            }
            written.add(file);
        }
        return written;
    }

    /** {series, category, metric, value} per seed and series in artifact order; empty when any value is missing. */
    static List<String[]> points(Chart chart, JsonNode seeds) {
        List<String[]> points = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = seeds.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> seed = it.next();
            for (Series s : chart.series()) {
                JsonNode v = seed.getValue().path("metrics").get(s.metric());
                if (v == null || !v.isNumber() || !Double.isFinite(v.doubleValue())) {
                    return List.of();
                }
                points.add(new String[] {s.label(), "seed " + seed.getKey(), s.metric(), v.asText()});
            }
        }
        return points;
    }

    /** The chart drawing the points: grouped bars, or floating interval bars with a line at 0. */
    static JFreeChart chart(Chart chart, List<String[]> points) {
        CategoryDataset data;
        if (chart.interval()) {
            int n = points.size() / 2;
            Number[][] lows = new Number[1][n];
            Number[][] highs = new Number[1][n];
            String[] categories = new String[n];
            for (int i = 0; i < n; i++) {
                categories[i] = points.get(2 * i)[1];
                lows[0][i] = Double.parseDouble(points.get(2 * i)[3]);
                highs[0][i] = Double.parseDouble(points.get(2 * i + 1)[3]);
            }
            data = new DefaultIntervalCategoryDataset(new String[] {chart.series().get(0).label()}, categories, lows,
                    highs);
        } else {
            DefaultCategoryDataset bars = new DefaultCategoryDataset();
            for (String[] p : points) {
                bars.addValue(Double.parseDouble(p[3]), p[0], p[1]);
            }
            data = bars;
        }
        BarRenderer renderer = chart.interval() ? new IntervalBarRenderer() : new BarRenderer();
        CategoryPlot plot = new CategoryPlot(data, new CategoryAxis("seed"), new NumberAxis(chart.valueAxis()),
                renderer);
        if (chart.interval()) {
            plot.addRangeMarker(new ValueMarker(0.0, Color.BLACK, new BasicStroke(1f)));
        }
        JFreeChart jfc = new JFreeChart(chart.title(), JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        ChartFactory.getChartTheme().apply(jfc);
        renderer.setBarPainter(new StandardBarPainter());
        renderer.setShadowVisible(false);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        jfc.setBackgroundPaint(Color.WHITE);
        return jfc;
    }

    private static String svg(String paper, Chart chart, List<String[]> points) {
        JFreeChart jfc = chart(chart, points);
        SVGGraphics2D g = new SVGGraphics2D(WIDTH, HEIGHT);
        g.setDefsKeyPrefix(paper + "-" + chart.file().replace(".svg", "") + "-"); // stable, unique ids
        jfc.draw(g, new Rectangle(0, 0, WIDTH, HEIGHT));
        String element = g.getSVGElement();
        StringBuilder meta = new StringBuilder("<metadata id=\"" + DATA_ID + "\">\nseries,category,metric,value\n");
        for (String[] p : points) {
            meta.append(escape(String.join(",", p))).append('\n');
        }
        int open = element.indexOf('>') + 1;
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + element.substring(0, open) + meta + "</metadata>"
                + element.substring(open) + "\n";
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}

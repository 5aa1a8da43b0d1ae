package org.mechspec.compute;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fatbins that nvcc built into the jar ({@code src/main/cuda/build-kernels.sh}) and its record of the build:
 * nvcc's version, the flags and each image's SHA-256 ({@code kernels.json}).
 */
final class KernelImages {
    static final String DIR = "/org/mechspec/kernels/";
    private static JsonNode record;

    private KernelImages() {
    }

    /** True when nvcc built the main kernels into this jar. */
    static boolean built() {
        return KernelImages.class.getResource(DIR + "rounding.fatbin") != null;
    }

    /** The bytes of {@code <module>.fatbin}. */
    static byte[] read(String module) {
        String path = DIR + module + ".fatbin";
        try (InputStream in = KernelImages.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("kernel image " + path + " is missing: the build found no nvcc (see its log)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read kernel image " + path, e);
        }
    }

    /** nvcc's version line, e.g. "Cuda compilation tools, release 13.0, V13.0.88", or "unknown". */
    static synchronized String nvcc() {
        if (record == null) {
            try (InputStream in = KernelImages.class.getResourceAsStream(DIR + "kernels.json")) {
                record = in == null ? new ObjectMapper().createObjectNode() : new ObjectMapper().readTree(in);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + DIR + "kernels.json", e);
            }
        }
        return record.path("nvcc").asText("unknown");
    }

    /** The modules nvcc built into the jar (test kernels, e.g. the emulator's self-test, are not among them). */
    static synchronized java.util.Set<String> mainModules() {
        nvcc();
        java.util.Set<String> out = new java.util.TreeSet<>();
        record.path("images").fieldNames().forEachRemaining(out::add);
        return out;
    }

    /** The CUDA release nvcc belongs to, e.g. "13.0", or "unknown". */
    static String nvccRelease() {
        Matcher m = Pattern.compile("release (\\d+\\.\\d+)").matcher(nvcc());
        return m.find() ? m.group(1) : "unknown";
    }
}

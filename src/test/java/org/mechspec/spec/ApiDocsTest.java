package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.DocumentationTool;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The API pages hold what {@code mvn javadoc:javadoc} promises (pom.xml): javadoc over every main source with all of
 * doclint reports no error and no warning except a method's missing {@code @param}/{@code @return}/{@code @throws}, and
 * in the framework and core packages no public type or member without a comment.
 */
class ApiDocsTest {
    private static final Pattern DOCUMENTED = Pattern.compile(".*/org/mechspec/(spec|report|worker|cli|compute|data|tokenize)/[^/]+\\.java");
    private static final Pattern TAG_ONLY = Pattern.compile("no @(param|return|throws)( .*)?");

    @Test
    void javadocWarnsOfNothingButMethodTags(@TempDir Path out) throws IOException {
        DocumentationTool javadoc = ToolProvider.getSystemDocumentationTool();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        List<String> problems = new ArrayList<>();
        try (StandardJavaFileManager files = javadoc.getStandardFileManager(diagnostics, Locale.ROOT, null);
             Stream<Path> walk = Files.walk(Path.of("src/main/java"))) {
            List<Path> sources = walk.filter(p -> p.toString().endsWith(".java")).sorted().toList();
            String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            List<String> options = List.of("-Xdoclint:all", "-Xmaxwarns", "100000", "-quiet", "-d", out.toString(), "-classpath", classPath);
            Boolean ok = javadoc.getTask(new StringWriter(), files, diagnostics, null, options, files.getJavaFileObjectsFromPaths(sources)).call();
            for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
                String message = d.getMessage(Locale.ROOT);
                String where = d.getSource() == null ? "" : d.getSource().getName() + ":" + d.getLineNumber();
                boolean documented = DOCUMENTED.matcher(where.replace('\\', '/').replaceAll(":\\d+$", "")).matches();
                if (d.getKind() == Diagnostic.Kind.ERROR
                        || (d.getKind() == Diagnostic.Kind.WARNING || d.getKind() == Diagnostic.Kind.MANDATORY_WARNING)
                        && !TAG_ONLY.matcher(message).matches() && (documented || !message.startsWith("no comment"))) {
                    problems.add(where + ": " + message);
                }
            }
            assertThat(ok).as("javadoc ran: %s", problems).isTrue();
        }
        assertThat(problems).as("javadoc's doclint").isEmpty();
    }
}

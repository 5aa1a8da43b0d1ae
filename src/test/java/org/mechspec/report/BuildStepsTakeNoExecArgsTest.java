package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * The documentation's commands (README and src/site/markdown/) that end in {@code exec:java -Dexec.args=…} (the checkpoint generator) pass through the build's
 * own exec-maven-plugin steps on the way. {@code -Dexec.args} fills the {@code commandlineArgs} of every execution that
 * does not set its own, which replaced the source-fingerprints step's arguments and failed the command. Every exec step
 * such a command reaches therefore pins {@code commandlineArgs}.
 */
@Tag("platform")
class BuildStepsTakeNoExecArgsTest {
    /** Lifecycle phases up to test-compile, the last one a README exec command runs. */
    private static final List<String> REACHED = List.of("validate", "initialize", "generate-sources", "process-sources",
            "generate-resources", "process-resources", "compile", "process-classes", "generate-test-sources",
            "process-test-sources", "generate-test-resources", "process-test-resources", "test-compile");

    @Test
    void everyExecStepBeforeTheReadmesExecCommandsPinsItsArguments() throws Exception {
        StringBuilder readme = new StringBuilder(Files.readString(Path.of("README.md")));
        try (var pages = Files.list(Path.of("src/site/markdown"))) {
            for (Path page : pages.sorted().toList()) {
                readme.append('\n').append(Files.readString(page));
            }
        }
        Matcher m = Pattern.compile("mvn [^\\n`]*?(\\S+) exec:java[^\\n`]*-Dexec\\.args").matcher(readme);
        List<String> phases = new ArrayList<>();
        while (m.find()) {
            phases.add(m.group(1));
        }
        assertThat(phases).as("documented commands with -Dexec.args").isNotEmpty().allMatch(REACHED::contains);

        NodeList executions = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile())
                .getElementsByTagName("execution");
        List<String> reached = new ArrayList<>();
        for (int i = 0; i < executions.getLength(); i++) {
            Element e = (Element) executions.item(i);
            Element plugin = (Element) e.getParentNode().getParentNode();
            String phase = text(e, "phase");
            if (!text(plugin, "artifactId").equals("exec-maven-plugin") || !REACHED.contains(phase)) {
                continue;
            }
            reached.add(text(e, "id"));
            assertThat(e.getElementsByTagName("commandlineArgs").getLength())
                    .as("exec step '%s' (phase %s) sets commandlineArgs, so -Dexec.args cannot replace its arguments", text(e, "id"), phase)
                    .isEqualTo(1);
        }
        assertThat(reached).contains("source-fingerprints");
    }

    private static String text(Element parent, String tag) {
        NodeList n = parent.getElementsByTagName(tag);
        for (int i = 0; i < n.getLength(); i++) {
            if (n.item(i).getParentNode() == parent) {
                return n.item(i).getTextContent().strip();
            }
        }
        return "";
    }
}

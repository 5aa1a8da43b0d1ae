package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Allure files a result under every category it matches (status, then the message against the regex, whole). A
 * catch-all "skipped" used to repeat every GPU and data skip: each result now lands in exactly one category, the one
 * the README names.
 */
@Tag("platform")
class AllureCategoriesTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "failed  | fold-bias/x does not hold on seed 42 (cpu): {}                        | check failed",
        "broken  | java.lang.IllegalStateException: metric 'x' of seed 42 is NaN         | broken: the contract threw",
        "skipped | needs a CUDA device: no CUDA driver (libcuda.so.1)                    | skipped: no GPU",
        "skipped | CPU backend only                                                      | skipped: no GPU",
        "skipped | /d/hamlet/hamlet.txt is absent: download it to hamlet/hamlet.txt       | skipped: data missing",
        "skipped | no data folder: pass -Dmechspec.data.dir=DIR (CI uses ../shared/data)  | skipped: data missing",
        "skipped | /d/x is absent: a CUDA device run needs the data folder                | skipped: data missing",
        "skipped | seed 45 is not selected by -Dmechspec.seeds                           | skipped: other reason",
        "skipped | not judged: foldbias.nnls not served                                  | not judged: the implementation computed nothing of it",
        "skipped | not judged: calls no operation of the implementation                  | not judged: the implementation computed nothing of it",
        "skipped | not judged: attention (f64) not served on a CUDA device                | not judged: the implementation computed nothing of it",
    })
    void eachResultFallsInExactlyOneCategory(String status, String message, String category) throws Exception {
        List<String> matched = new ArrayList<>();
        for (JsonNode c : PaperRun.JSON.readTree(AllureEnvironment.CATEGORIES)) {
            boolean statusMatches = false;
            for (JsonNode s : c.path("matchedStatuses")) {
                statusMatches |= s.asText().equals(status);
            }
            if (statusMatches && (!c.has("messageRegex") || message.strip().matches(c.get("messageRegex").asText()))) {
                matched.add(c.get("name").asText());
            }
        }
        assertThat(matched).containsExactly(category);
    }
}

package org.mechspec.data;

/**
 * WikiText-2 (v1, tokenized, with {@code <unk>} markers) under {@code -Dmechspec.data.dir}: the validation split
 * trains the project's small model, the test split evaluates it. Bytes are verified against the pinned SHA-256
 * of src/site/markdown/data.md; a missing file skips, a different file is an error.
 */
public enum WikiText2 {
    /** The validation split. */
    VALIDATION("wikitext-2/valid.txt", "f0737ed31fc1329026e95cb8b98e19c2a182c39c240ab909dc31abf2f8af58e8"),
    /** The test split. */
    TEST("wikitext-2/test.txt", "d790b833ef8cf03a90db7bf1271b7520b83c45ce07ba3c1a9699df81e239eca0");

    /** Dataset id written into records and artifacts. */
    public static final String DATASET_ID = "wikitext-2-v1 (tokenized)";

    private static final String SOURCE = "the WikiText-2 v1 (tokenized) splits (CC BY-SA 3.0, e.g. "
            + "https://huggingface.co/datasets/Salesforce/wikitext, config wikitext-2-v1)";

    private final String relativePath;
    private final String sha256;

    WikiText2(String relativePath, String sha256) {
        this.relativePath = relativePath;
        this.sha256 = sha256;
    }

    /** The split's bytes, SHA-256 verified. */
    public byte[] bytes() {
        return DataFiles.verifiedBytes(relativePath, sha256, SOURCE);
    }

    /** The split's file under the data folder. */
    public String relativePath() {
        return relativePath;
    }

    /** The SHA-256 the split's file must have. */
    public String sha256() {
        return sha256;
    }
}

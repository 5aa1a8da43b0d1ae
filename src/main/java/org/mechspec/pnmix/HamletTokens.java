package org.mechspec.pnmix;

import java.util.Arrays;
import org.mechspec.data.DataFiles;

/**
 * The protocol's input: the first bytes of the Hamlet text under {@code -Dmechspec.data.dir}, read only through
 * {@link DataFiles#verifiedBytes} (absent → the caller's test skips naming the file and the flag; different
 * bytes → {@link DataFiles.DataIntegrityException}).
 */
public final class HamletTokens {
    public static final String FILE = "hamlet/hamlet.txt";
    public static final String SHA256 = "31365b80b848ecf304591e0e67f494ca6d27fb2d92fa9e7ec569e5f6d31ca304";
    public static final String SOURCE = "Project Gutenberg eBook #1524 (Hamlet, https://www.gutenberg.org/ebooks/1524), body text"
            + " without the Gutenberg header and licence, ASCII with CRLF line ends, 179910 bytes (src/site/markdown/data.md)";

    private HamletTokens() {
    }

    /** The first {@code count} bytes and the SHA-256 of the verified file they come from. */
    public static Tokens first(int count) {
        byte[] all = DataFiles.verifiedBytes(FILE, SHA256, SOURCE);
        if (all.length < count) {
            throw new IllegalStateException(FILE + " has " + all.length + " bytes, the protocol needs " + count);
        }
        return new Tokens(Arrays.copyOf(all, count), DataFiles.sha256(all));
    }

    /** Token bytes and the fingerprint of the file they were taken from. */
    public record Tokens(byte[] bytes, String fileSha256) {
    }
}

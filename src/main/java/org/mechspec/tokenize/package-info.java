/**
 * Byte-level BPE tokenization of text for protocols on real checkpoints (issue #14: OAL on Qwen2.5-0.5B): a Hugging
 * Face tokenizer.json through DJL's binding of the {@code tokenizers} library, pinned by SHA-256. No paper uses it
 * yet, so it is in no manifest's {@code sources}.
 */
package org.mechspec.tokenize;

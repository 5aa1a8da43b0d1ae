/**
 * Byte-level BPE tokenization of text for protocols on real checkpoints (issue #14: OAL on Qwen2.5-0.5B): a Hugging
 * Face tokenizer.json through DJL's binding of the {@code tokenizers} library, pinned by SHA-256. OAL's checkpoint
 * protocol reads it (contracts/oal.json lists it in its sources).
 */
package org.mechspec.tokenize;

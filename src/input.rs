//! Splitting HL7 files and streams into messages: MSH boundaries, line endings, framed input, batches.

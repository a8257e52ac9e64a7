//! `mllp check` through the binary: the rules, the profile, batches, JSON, values only with
//! -v, and `send --check-hl7`.

mod rules;

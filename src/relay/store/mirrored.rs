//! A recorded row's shadow answer (`--record` with `--mirror`): written when the comparison
//! ends, after the row itself, into the file the row was written to.

use super::rows::same_generation;
use super::Store;
use rusqlite::params;

impl Store {
    /// Keep the shadow's final answer, its code and the comparison's outcome in row `id` of
    /// `generation`; nothing when the file has since been moved or replaced.
    pub async fn mirrored(
        &self,
        (generation, id): (u64, i64),
        ack: Option<bytes::Bytes>,
        outcome: &'static str,
    ) -> Result<(), String> {
        let code = ack.as_deref().and_then(|a| {
            crate::hl7::ack_reply(a).map(|(code, _)| String::from_utf8_lossy(code).into_owned())
        });
        self.with(move |open, file| {
            same_generation(open, generation, file)?;
            open.db
                .execute(
                    "UPDATE queue SET mirror_ack_code = ?1, mirror_ack = ?2, mirror_outcome = ?3
                        WHERE id = ?4",
                    params![code, ack.as_deref(), outcome, id],
                )
                .map_err(|e| e.to_string())?;
            Ok(())
        })
        .await
    }
}

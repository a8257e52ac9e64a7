//! What every acknowledgement must carry, checked the way a strict HL7 reader would: each MSH
//! with MSH-1/MSH-2 valid and distinct and MSH-7, MSH-9 (`ACK`), MSH-10, MSH-11 and MSH-12
//! present; each MSA with a Table 0008 code; a negative one with MSA-3 and an ERR code.

/// Check every MSH and MSA segment of `payload`; the MSA-2 values, in order.
pub(crate) fn required_fields(payload: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    let text = String::from_utf8_lossy(payload);
    let segments: Vec<&[u8]> = payload
        .split(|&b| b == b'\r')
        .filter(|s| !s.is_empty())
        .collect();
    let mut sep = None;
    let mut echoes = Vec::new();
    for (i, segment) in segments.iter().enumerate() {
        let name = segment.get(..3).unwrap_or_default();
        if name == b"MSH" {
            sep = Some(check_msh(segment).map_err(|e| format!("{e} in {text:?}"))?);
        } else if name == b"MSA" {
            let sep = sep.ok_or_else(|| format!("MSA before any MSH in {text:?}"))?;
            let fields: Vec<&[u8]> = segment.split(|&b| b == sep).collect();
            let code = fields.get(1).copied().unwrap_or_default();
            let code = crate::ack::AckCode::parse(code)
                .ok_or_else(|| format!("MSA-1 is not a code in {text:?}"))?;
            if !code.is_positive() {
                let msa3 = fields.get(3).copied().unwrap_or_default();
                let err = segments.get(i + 1).copied().unwrap_or_default();
                let err3 = err.split(|&b| b == sep).nth(3).unwrap_or_default();
                if msa3.is_empty() || !err.starts_with(b"ERR") || err3.len() < 3 {
                    return Err(format!("negative ACK without MSA-3 and ERR in {text:?}"));
                }
            }
            echoes.push(fields.get(2).copied().unwrap_or_default().to_vec());
        }
    }
    if echoes.is_empty() {
        return Err(format!("no MSA in {text:?}"));
    }
    Ok(echoes)
}

/// One MSH: its field separator when every required field is there.
fn check_msh(segment: &[u8]) -> Result<u8, String> {
    let sep = *segment.get(3).ok_or("MSH without MSH-1")?;
    let fields: Vec<&[u8]> = segment[4..].split(|&b| b == sep).collect();
    let encoding = fields[0];
    let mut delimiters = encoding.to_vec();
    delimiters.push(sep);
    let distinct = delimiters
        .iter()
        .enumerate()
        .all(|(i, b)| !delimiters[..i].contains(b));
    if !(4..=5).contains(&encoding.len())
        || !distinct
        || delimiters.iter().any(|b| b.is_ascii_alphanumeric())
    {
        return Err("MSH-1/MSH-2 not valid and distinct".into());
    }
    // fields[n - 2] is MSH-n.
    let field = |n: usize| fields.get(n - 2).copied().unwrap_or_default();
    for n in [7, 9, 10, 11, 12] {
        if field(n).is_empty() {
            return Err(format!("empty MSH-{n}"));
        }
    }
    if field(9).split(|&b| b == encoding[0]).next() != Some(b"ACK") {
        return Err("MSH-9 is not ACK".into());
    }
    Ok(sep)
}

//! ADT traffic with known patients, for `diff` and `deid`: each patient admitted (A01),
//! transferred (A02), updated (A08, with a note) and discharged (A03), with next of kin,
//! guarantor and insurance filled, and every identifying value the messages hold listed.

/// A small deterministic generator (an LCG), so runs and failures repeat.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407))
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn digits(&mut self, n: usize) -> String {
        let first = (b'1' + self.below(9) as u8) as char;
        let rest: String = (1..n)
            .map(|_| (b'0' + self.below(10) as u8) as char)
            .collect();
        format!("{first}{rest}")
    }

    /// A made-up name of three syllables, upper case: in no list of names.
    pub fn name(&mut self) -> String {
        const SYLLABLES: &[&str] = &[
            "ZOR", "VEL", "QUA", "TRIX", "MOB", "KEL", "DRU", "FEX", "GOL", "PRAN", "SUL", "WIM",
            "YAX", "ZEB", "OLT", "UMB", "IRK", "HOV", "JUX", "NAF",
        ];
        (0..3)
            .map(|_| SYLLABLES[self.below(SYLLABLES.len() as u64) as usize])
            .collect()
    }
}

/// One patient and the people and numbers around them.
pub struct Patient {
    pub mrn: String,
    pub ssn: String,
    pub family: String,
    pub given: String,
    pub dob: String,
    pub street: String,
    pub city: String,
    pub zip: String,
    pub phone: String,
    pub email: String,
    pub account: String,
    pub visit: String,
    pub kin: (String, String, String),
    pub kin_phone: String,
    pub guarantor: (String, String, String),
    pub guarantor_ssn: String,
    pub insured_id: String,
    pub policy: String,
    pub doctor: (String, String, String),
    /// Admission, as a day number from 2024-01-01, and the stay in days.
    pub admitted: u32,
    pub stay: u32,
}

impl Patient {
    pub fn new(rng: &mut Rng) -> Patient {
        let family = rng.name();
        let given = rng.name();
        let dob = format!(
            "19{}{:02}{:02}",
            40 + rng.below(50),
            1 + rng.below(12),
            1 + rng.below(28)
        );
        Patient {
            mrn: rng.digits(8),
            ssn: format!("{}-{}-{}", rng.digits(3), rng.digits(2), rng.digits(4)),
            email: format!(
                "{}.{}@{}.example",
                given.to_lowercase(),
                family.to_lowercase(),
                rng.name().to_lowercase()
            ),
            family,
            given,
            dob,
            street: format!("{} {} AVENUE", rng.digits(4), rng.name()),
            city: rng.name(),
            zip: rng.digits(5),
            phone: format!("({}){}-{}", rng.digits(3), rng.digits(3), rng.digits(4)),
            account: format!("AC{}", rng.digits(9)),
            visit: format!("V{}", rng.digits(9)),
            kin: (
                rng.name(),
                rng.name(),
                format!(
                    "19{}0{}1{}",
                    30 + rng.below(50),
                    1 + rng.below(9),
                    rng.below(9)
                ),
            ),
            kin_phone: format!("({}){}-{}", rng.digits(3), rng.digits(3), rng.digits(4)),
            guarantor: (
                rng.name(),
                rng.name(),
                format!(
                    "19{}1{}0{}",
                    30 + rng.below(50),
                    rng.below(3),
                    1 + rng.below(9)
                ),
            ),
            guarantor_ssn: rng.digits(9),
            insured_id: format!("INS{}", rng.digits(8)),
            policy: format!("POL{}", rng.digits(8)),
            doctor: (rng.digits(6), rng.name(), rng.name()),
            admitted: rng.below(300) as u32,
            stay: 1 + rng.below(9) as u32,
        }
    }

    /// Every identifying value the messages hold, as written (admission and discharge times
    /// are also message times, which stay: their intervals are tested instead).
    pub fn identifiers(&self) -> Vec<String> {
        let all = vec![
            self.mrn.clone(),
            self.ssn.clone(),
            self.family.clone(),
            self.given.clone(),
            self.dob.clone(),
            self.street.clone(),
            self.city.clone(),
            self.zip.clone(),
            self.phone.clone(),
            self.email.clone(),
            self.account.clone(),
            self.visit.clone(),
            self.kin.0.clone(),
            self.kin.1.clone(),
            self.kin.2.clone(),
            self.kin_phone.clone(),
            self.guarantor.0.clone(),
            self.guarantor.1.clone(),
            self.guarantor.2.clone(),
            self.guarantor_ssn.clone(),
            self.insured_id.clone(),
            self.policy.clone(),
            self.doctor.0.clone(),
            self.doctor.1.clone(),
            self.doctor.2.clone(),
        ];
        all
    }

    /// `YYYYMMDDHHMM` of day `day` from 2024-01-01 at `hhmm`.
    fn at(day: u32, hhmm: &str) -> String {
        let months = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
        let (mut month, mut d) = (0, day);
        while d >= months[month] {
            d -= months[month];
            month += 1;
        }
        format!("2024{:02}{:02}{hhmm}", month + 1, d + 1)
    }

    pub fn admit(&self) -> String {
        Self::at(self.admitted, "0815")
    }

    pub fn discharge(&self) -> String {
        Self::at(self.admitted + self.stay, "1130")
    }

    /// This patient's messages: A01, A02, A08 and A03, control IDs from `first`.
    pub fn messages(&self, first: u64) -> Vec<(String, String)> {
        let p = self;
        let pid = format!(
            "PID|1||{mrn}^^^GH^MR~{ssn}^^^SSA^SS||{family}^{given}^Q||{dob}|F|||{street}^^{city}^OR^{zip}^USA||{phone}^PRN^PH~^NET^Internet^{email}|||||{account}^^^GH^AN|{ssn}",
            mrn = p.mrn, ssn = p.ssn, family = p.family, given = p.given, dob = p.dob,
            street = p.street, city = p.city, zip = p.zip, phone = p.phone, email = p.email,
            account = p.account
        );
        let nk1 = format!(
            "NK1|1|{}^{}|SPO|{}^^{}^OR^{}|{}||||||||||M|{}",
            p.kin.0, p.kin.1, p.street, p.city, p.zip, p.kin_phone, p.kin.2
        );
        let gt1 = format!(
            "GT1|1|{}^^^GH|{}^{}||{}^^{}^OR^{}|{}||{}|M||SEL|{}",
            p.account,
            p.guarantor.0,
            p.guarantor.1,
            p.street,
            p.city,
            p.zip,
            p.phone,
            p.guarantor.2,
            p.guarantor_ssn
        );
        let in1 = format!(
            "IN1|1|PLAN7|INS01^^^INS|ACME HEALTH PLAN||||||||||||{}^{}|SEL|{}|{}^^{}^OR^{}|||||||||||||||||{}|||||||||||||{}",
            p.family, p.given, p.dob, p.street, p.city, p.zip, p.policy, p.insured_id
        );
        let pv1 = |class: &str, bed: &str, discharge: &str| {
            format!(
                "PV1|1|{class}|W^{bed}^1||||{}^{}^{}|||MED|||||||||{}|||||||||||||||||||||||||{}|{discharge}",
                p.doctor.0, p.doctor.1, p.doctor.2, p.visit, p.admit()
            )
        };
        let msh = |event: &str, structure: &str, id: u64, ts: &str| {
            format!("MSH|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|{ts}||ADT^{event}^{structure}|MSG{id:08}|P|2.5\rEVN|{event}|{ts}")
        };
        let note = format!(
            "OBX|1|TX|NOTE^Nursing note||Patient {} {} rests well||||||F",
            p.given, p.family
        );
        let transferred = Self::at(p.admitted, "1600");
        let updated = Self::at(p.admitted + 1, "0900");
        vec![
            (
                "a01".into(),
                [
                    msh("A01", "ADT_A01", first, &p.admit()),
                    pid.clone(),
                    nk1.clone(),
                    pv1("I", "101", ""),
                    gt1.clone(),
                    in1.clone(),
                ]
                .join("\r")
                    + "\r",
            ),
            (
                "a02".into(),
                [
                    msh("A02", "ADT_A02", first + 1, &transferred),
                    pid.clone(),
                    pv1("I", "205", ""),
                ]
                .join("\r")
                    + "\r",
            ),
            (
                "a08".into(),
                [
                    msh("A08", "ADT_A01", first + 2, &updated),
                    pid.clone(),
                    nk1,
                    pv1("I", "205", ""),
                    note,
                    gt1,
                    in1,
                ]
                .join("\r")
                    + "\r",
            ),
            (
                "a03".into(),
                [
                    msh("A03", "ADT_A03", first + 3, &p.discharge()),
                    pid,
                    pv1("I", "205", &p.discharge()),
                ]
                .join("\r")
                    + "\r",
            ),
        ]
    }
}

/// `n` patients and their messages, by kind (`a01`, `a02`, `a08`, `a03`).
pub fn traffic(seed: u64, n: usize) -> (Vec<Patient>, Vec<(String, String)>) {
    let mut rng = Rng::new(seed);
    let patients: Vec<Patient> = (0..n).map(|_| Patient::new(&mut rng)).collect();
    let messages = patients
        .iter()
        .enumerate()
        .flat_map(|(i, p)| p.messages(1 + 4 * i as u64))
        .collect();
    (patients, messages)
}

//! The `net` package (in progress).

use super::StdMember;

pub(super) static MEMBERS: &[StdMember] = &[];

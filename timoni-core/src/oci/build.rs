//! Building Timoni artifacts byte for byte: the deterministic layer tarball (Go `archive/tar`
//! USTAR headers as Flux's `Build` writes them: root `.` entry, relative names, no trailing
//! slash, uid/gid 0, zero times, permission bits kept, only files and directories), gzip with a
//! zero mtime, the config blob of go-containerregistry's `empty.Image`, and the compact manifest
//! JSON with Go's key order and HTML escaping. The same tree always gives the same digests.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use flate2::{Compression, GzBuilder};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use super::error::{OciError, Result};
use super::{
    CONFIG_MEDIA_TYPE, CONTENT_MEDIA_TYPE, CONTENT_TYPE_ANNOTATION, CONTENT_TYPE_MODULE,
    CONTENT_TYPE_VENDOR, MANIFEST_MEDIA_TYPE, annotations,
};

/// One gzip-compressed content layer, ready to push.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The compressed tarball.
    pub blob: Vec<u8>,
    /// `sha256:` of `blob`.
    pub digest: String,
    /// `sha256:` of the uncompressed tarball (the config's `diff_ids`).
    pub diff_id: String,
    /// The `sh.timoni.content.type` annotation.
    pub content_type: String,
}

/// A content descriptor as it appears in a manifest (go-containerregistry field order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub size: u64,
    pub digest: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The manifest document (go-containerregistry `v1.Manifest` field order).
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Manifest {
    pub schema_version: u32,
    #[serde(default)]
    pub media_type: String,
    pub config: Descriptor,
    #[serde(default)]
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// A complete artifact: config blob, layers and the manifest that names them.
#[derive(Debug, Clone)]
pub struct Image {
    pub config: Vec<u8>,
    pub layers: Vec<Layer>,
    pub manifest: Vec<u8>,
    /// `sha256:` of `manifest`.
    pub digest: String,
}

/// `sha256:<hex>` of some bytes.
pub(crate) fn sha256(data: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(data)))
}

/// The two layers of a module image: `cue.mod/` first, then everything else minus the
/// `timoni.ignore` patterns (which do not apply to the vendor layer).
pub fn module_layers(dir: &Path, resolve_symlinks: bool) -> Result<[Layer; 2]> {
    check_dir(dir)?;
    let vendor = matcher(dir, &["/*", "!/cue.mod"])?;
    let mut lines = ignore_lines(dir)?;
    lines.push("/cue.mod".to_string());
    let module = matcher(dir, &lines)?;
    Ok([
        build_layer(dir, &vendor, resolve_symlinks, CONTENT_TYPE_VENDOR)?,
        build_layer(dir, &module, resolve_symlinks, CONTENT_TYPE_MODULE)?,
    ])
}

/// The single layer of a generic artifact: a directory (minus its `timoni.ignore` patterns) or
/// one file (stored beside the root `.` entry).
pub fn artifact_layer(path: &Path, content_type: &str, resolve_symlinks: bool) -> Result<Layer> {
    let meta = std::fs::metadata(path).map_err(|e| OciError::io(path, e))?;
    if meta.is_file() {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = parent.unwrap_or(Path::new("."));
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let only = matcher(
            parent,
            &["/*".to_string(), format!("!/{}", glob_escape(&name))],
        )?;
        return build_layer(parent, &only, resolve_symlinks, content_type);
    }
    check_dir(path)?;
    let m = matcher(path, &ignore_lines(path)?)?;
    build_layer(path, &m, resolve_symlinks, content_type)
}

fn check_dir(dir: &Path) -> Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(OciError::InvalidInput(format!(
            "{} is not a directory",
            dir.display()
        ))),
        Err(e) => Err(OciError::io(dir, e)),
    }
}

fn glob_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '!' | '#') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The patterns of `<dir>/timoni.ignore`, without comments and blank lines.
fn ignore_lines(dir: &Path) -> Result<Vec<String>> {
    let path = dir.join("timoni.ignore");
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(OciError::io(path, e)),
    }
}

fn matcher<S: AsRef<str>>(root: &Path, lines: &[S]) -> Result<Gitignore> {
    let mut b = GitignoreBuilder::new(root);
    for l in lines {
        b.add_line(None, l.as_ref()).map_err(|e| {
            OciError::InvalidInput(format!("timoni.ignore pattern {:?}: {e}", l.as_ref()))
        })?;
    }
    b.build()
        .map_err(|e| OciError::InvalidInput(format!("timoni.ignore: {e}")))
}

/// Walks `root` in lexical order (as Go's `filepath.Walk`) and writes the deterministic
/// tarball of what `ignore` does not exclude, then gzips it.
fn build_layer(
    root: &Path,
    ignore: &Gitignore,
    resolve_symlinks: bool,
    content_type: &str,
) -> Result<Layer> {
    let mut tar = Vec::new();
    let mut walk = walkdir::WalkDir::new(root)
        .follow_links(resolve_symlinks)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walk.next() {
        let entry = entry.map_err(|e| {
            let path = e.path().unwrap_or(root).to_path_buf();
            OciError::io(path, std::io::Error::other(e.to_string()))
        })?;
        let ft = entry.file_type();
        let is_dir = ft.is_dir();
        if entry.depth() > 0 && ignore.matched(entry.path(), is_dir).is_ignore() {
            if is_dir {
                walk.skip_current_dir();
            }
            continue;
        }
        // Symlinks (when not followed), sockets, fifos and devices are not stored.
        if !(is_dir || ft.is_file()) {
            continue;
        }
        let meta = entry
            .metadata()
            .map_err(|e| OciError::io(entry.path(), std::io::Error::other(e.to_string())))?;
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        let name = if rel.is_empty() { ".".to_string() } else { rel };
        let mode = meta.permissions().mode() & 0o7777;
        if is_dir {
            write_entry(&mut tar, &name, mode, b'5', &[])?;
        } else {
            let data = std::fs::read(entry.path()).map_err(|e| OciError::io(entry.path(), e))?;
            write_entry(&mut tar, &name, mode, b'0', &data)?;
        }
    }
    tar.extend_from_slice(&[0u8; 1024]);
    let diff_id = sha256(&tar);
    let mut gz = GzBuilder::new()
        .mtime(0)
        .operating_system(255)
        .write(Vec::new(), Compression::default());
    gz.write_all(&tar)
        .and_then(|_| gz.try_finish())
        .map_err(|e| OciError::io(root, e))?;
    let blob = gz.finish().map_err(|e| OciError::io(root, e))?;
    Ok(Layer {
        digest: sha256(&blob),
        blob,
        diff_id,
        content_type: content_type.to_string(),
    })
}

const BLOCK: usize = 512;

/// One entry of a tarball built in memory: a directory (`None`) or a file with its bytes.
pub(crate) struct TarEntry<'a> {
    pub name: &'a str,
    pub mode: u32,
    pub data: Option<&'a [u8]>,
}

/// The deterministic tarball (same headers as the layers) of `entries`, in the order given,
/// with the closing zero blocks.
pub(crate) fn tar_of(entries: &[TarEntry<'_>]) -> Result<Vec<u8>> {
    let mut tar = Vec::new();
    for e in entries {
        match e.data {
            Some(d) => write_entry(&mut tar, e.name, e.mode, b'0', d)?,
            None => write_entry(&mut tar, e.name, e.mode, b'5', &[])?,
        }
    }
    tar.extend_from_slice(&[0u8; 1024]);
    Ok(tar)
}

/// Appends one header (and the data padded to 512 bytes) the way Go's `tar.Writer` does: USTAR
/// when the name fits (split into prefix and name if needed), else a PAX `path` record first.
fn write_entry(out: &mut Vec<u8>, name: &str, mode: u32, flag: u8, data: &[u8]) -> Result<()> {
    let ustar_name = if name.len() <= 100 && name.is_ascii() {
        Some((String::new(), name.to_string()))
    } else {
        split_ustar_path(name)
    };
    let (prefix, short) = match ustar_name {
        Some(p) => p,
        None => {
            let record = pax_record("path", name);
            let (dir, file) = match name.rfind('/') {
                Some(i) => (&name[..=i], &name[i + 1..]),
                None => ("", name),
            };
            let mut pax_name = format!("{dir}PaxHeaders.0/{file}");
            pax_name.truncate(floor_char_boundary(&pax_name, 100));
            let mut h = [0u8; BLOCK];
            put_str(&mut h[0..100], pax_name.trim_end_matches('/'));
            put_octal(&mut h[100..108], 0);
            put_octal(&mut h[108..116], 0);
            put_octal(&mut h[116..124], 0);
            put_octal(&mut h[124..136], record.len() as u64);
            put_octal(&mut h[136..148], 0);
            h[156] = b'x';
            finish_header(&mut h);
            out.extend_from_slice(&h);
            push_padded(out, record.as_bytes());
            let ascii: String = name.chars().filter(char::is_ascii).collect();
            (String::new(), ascii.chars().take(100).collect())
        }
    };
    let mut h = [0u8; BLOCK];
    put_str(&mut h[0..100], &short);
    put_octal(&mut h[100..108], u64::from(mode));
    put_octal(&mut h[108..116], 0);
    put_octal(&mut h[116..124], 0);
    put_octal(&mut h[124..136], data.len() as u64);
    put_octal(&mut h[136..148], 0);
    h[156] = flag;
    put_octal(&mut h[329..337], 0);
    put_octal(&mut h[337..345], 0);
    put_str(&mut h[345..500], &prefix);
    if data.len() as u64 >= 0o77777777777 {
        return Err(OciError::InvalidInput(format!(
            "{name} is too large for a tar entry"
        )));
    }
    finish_header(&mut h);
    out.extend_from_slice(&h);
    push_padded(out, data);
    Ok(())
}

fn floor_char_boundary(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Go's `splitUSTARPath`.
fn split_ustar_path(name: &str) -> Option<(String, String)> {
    let mut length = name.len();
    if length <= 100 || !name.is_ascii() {
        return None;
    } else if length > 156 {
        length = 156;
    } else if name.as_bytes()[length - 1] == b'/' {
        length -= 1;
    }
    let i = name[..length].rfind('/')?;
    let nlen = name.len() - i - 1;
    if i == 0 || nlen > 100 || nlen == 0 || i > 155 {
        return None;
    }
    Some((name[..i].to_string(), name[i + 1..].to_string()))
}

fn pax_record(key: &str, value: &str) -> String {
    let body = format!(" {key}={value}\n");
    let mut size = body.len() + 1;
    loop {
        let total = size.to_string().len() + body.len();
        if total == size {
            return format!("{size}{body}");
        }
        size = total;
    }
}

fn put_str(field: &mut [u8], s: &str) {
    let n = s.len().min(field.len());
    field[..n].copy_from_slice(&s.as_bytes()[..n]);
}

/// Go's `formatOctal`: zero-padded octal digits followed by one NUL.
fn put_octal(field: &mut [u8], v: u64) {
    let s = format!("{v:0width$o}", width = field.len() - 1);
    put_str(field, &s);
    field[field.len() - 1] = 0;
}

/// Sets the USTAR magic and Go's checksum layout (six octal digits, NUL, space).
fn finish_header(h: &mut [u8; BLOCK]) {
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u64 = h.iter().map(|&b| u64::from(b)).sum();
    put_octal(&mut h[148..155], sum);
    h[155] = b' ';
}

fn push_padded(out: &mut Vec<u8>, data: &[u8]) {
    out.extend_from_slice(data);
    let rem = data.len() % BLOCK;
    if rem != 0 {
        out.resize(out.len() + BLOCK - rem, 0);
    }
}

/// The config blob of go-containerregistry's `empty.Image` with these layers appended: one
/// empty history entry and one diff id per layer (342 bytes for a module).
fn config_blob(layers: &[Layer]) -> Vec<u8> {
    let zero = "0001-01-01T00:00:00Z";
    let history = vec![format!("{{\"created\":\"{zero}\"}}"); layers.len()].join(",");
    let diff_ids = layers
        .iter()
        .map(|l| format!("\"{}\"", l.diff_id))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        "{{\"architecture\":\"\",\"created\":\"{zero}\",\"history\":[{history}],\"os\":\"\",\"rootfs\":{{\"type\":\"layers\",\"diff_ids\":[{diff_ids}]}},\"config\":{{}}}}"
    )
    .into_bytes()
}

/// Assembles the config blob and the manifest of an artifact made of `layers`.
pub fn assemble_image(layers: Vec<Layer>, annotations: BTreeMap<String, String>) -> Image {
    let config = config_blob(&layers);
    let manifest = Manifest {
        schema_version: 2,
        media_type: MANIFEST_MEDIA_TYPE.to_string(),
        config: Descriptor {
            media_type: CONFIG_MEDIA_TYPE.to_string(),
            size: config.len() as u64,
            digest: sha256(&config),
            annotations: BTreeMap::new(),
        },
        layers: layers
            .iter()
            .map(|l| Descriptor {
                media_type: CONTENT_MEDIA_TYPE.to_string(),
                size: l.blob.len() as u64,
                digest: l.digest.clone(),
                annotations: BTreeMap::from([(
                    CONTENT_TYPE_ANNOTATION.to_string(),
                    l.content_type.clone(),
                )]),
            })
            .collect(),
        annotations,
    };
    let manifest = go_json(&manifest);
    Image {
        digest: sha256(&manifest),
        config,
        layers,
        manifest,
    }
}

/// Compact JSON as Go's `encoding/json` writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped.
/// They can only occur inside strings, so replacing them in the output is safe.
fn go_json<T: Serialize>(v: &T) -> Vec<u8> {
    let s = serde_json::to_string(v).expect("manifest serialization cannot fail");
    s.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
        .into_bytes()
}

/// The manifest annotations Timoni derives: `created` from `source_date_epoch` (the value of
/// `SOURCE_DATE_EPOCH`) or else the git commit time, `source` and `revision` from git, and the
/// version when given. `user` values (from `-a k=v`) win over derived ones, except the version.
pub fn default_annotations(
    dir: &Path,
    version: Option<&str>,
    source_date_epoch: Option<&str>,
    user: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>> {
    let mut out = user.clone();
    let git = |args: &[&str]| -> Option<String> {
        let o = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()?;
        let s = String::from_utf8(o.stdout).ok()?.trim().to_string();
        (o.status.success() && !s.is_empty()).then_some(s)
    };
    let created = match source_date_epoch.filter(|s| !s.is_empty()) {
        Some(s) => Some(rfc3339(s.trim().parse::<i64>().map_err(|_| {
            OciError::InvalidInput(format!("SOURCE_DATE_EPOCH={s:?} is not a Unix time"))
        })?)),
        None => git(&["show", "-s", "--format=%ct"])
            .and_then(|s| s.parse::<i64>().ok())
            .map(rfc3339),
    };
    let mut fill = |k: &str, v: Option<String>| {
        if let Some(v) = v {
            out.entry(k.to_string()).or_insert(v);
        }
    };
    fill(annotations::CREATED, created);
    fill(
        annotations::SOURCE,
        git(&["config", "--get", "remote.origin.url"]),
    );
    fill(annotations::REVISION, git(&["show", "-s", "--format=%H"]));
    if let Some(v) = version {
        out.insert(annotations::VERSION.to_string(), v.to_string());
    }
    Ok(out)
}

/// RFC 3339 UTC time of a Unix timestamp, as Go's `time.RFC3339` prints it.
pub(crate) fn rfc3339(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days; a date crate would be a dependency for ten lines.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests;

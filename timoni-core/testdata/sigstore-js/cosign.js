// sigstore-js (the npm `sigstore` packages, an implementation of Sigstore independent of
// ours and of the Rust `sigstore` crate) doing four of cosign's jobs for the signature tests;
// run with NODE_PATH set to the node_modules holding `sigstore`.
//
//   node cosign.js verify-blob KEY.pub PAYLOAD SIGNATURE_BASE64
//     checks a `.sig` layer's signature of its simple-signing payload with the public key, as
//     `cosign verify --key` does for each layer; prints "verified".
//   node cosign.js sign-image sha256:HEX
//     generates a P-256 key and signs the image digest as `cosign sign --key` with the new
//     bundle format does: a DSSE envelope of an in-toto statement (predicate
//     https://sigstore.dev/cosign/sign/v1) in a v0.3 bundle with a public key hint; prints
//     {"publicKey": PEM, "bundle": BUNDLE}.
//   node cosign.js verify-bundle KEY.pub BUNDLE sha256:HEX
//     checks a key-signed Sigstore bundle as `cosign verify --key --insecure-ignore-tlog` does
//     for the bundle form: the DSSE signature with the public key, and a statement with
//     predicate https://sigstore.dev/cosign/sign/v1 naming the digest; prints "verified".
//   node cosign.js verify-keyless TRUSTED_ROOT PAYLOAD SIGNATURE_BASE64 CERT_PEM REKOR_BUNDLE IDENTITY ISSUER
//     checks a keyless `.sig` layer (its payload, signature, and the certificate and Rekor
//     bundle annotations, in files) as `cosign verify --certificate-identity
//     --certificate-oidc-issuer` does: the certificate chains to the trusted root's CA, carries
//     an SCT from its CT log, names IDENTITY and ISSUER; the Rekor entry's signed entry
//     timestamp verifies with the root's log key and the signature with the certificate;
//     prints "verified".
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const { toMessageSignatureBundle, bundleFromJSON, bundleToJSON } = require('@sigstore/bundle');
const { TrustedRoot } = require('@sigstore/protobuf-specs');
const { DSSEBundleBuilder } = require('@sigstore/sign');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');

const EMPTY_ROOT = { certificateAuthorities: [], timestampAuthorities: [], tlogs: [], ctlogs: [] };

async function verifyBlob(keyFile, payloadFile, signature) {
  const key = crypto.createPublicKey(fs.readFileSync(keyFile));
  const payload = fs.readFileSync(payloadFile);
  const bundle = toMessageSignatureBundle({
    digest: crypto.createHash('sha256').update(payload).digest(),
    signature: Buffer.from(signature, 'base64'),
    keyHint: 'cosign.pub',
    certificateChain: false,
  });
  const trust = toTrustMaterial(EMPTY_ROOT, (hint) => {
    if (hint !== 'cosign.pub') throw new Error(`unknown key ${hint}`);
    return { publicKey: key, validFor: () => true };
  });
  // No transparency log: `cosign verify --key --insecure-ignore-tlog`.
  new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0 }).verify(toSignedEntity(bundle, payload));
  console.log('verified');
}

async function signImage(digest) {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const [alg, hex] = digest.split(':');
  const statement = {
    _type: 'https://in-toto.io/Statement/v1',
    subject: [{ name: '', digest: { [alg]: hex } }],
    predicateType: 'https://sigstore.dev/cosign/sign/v1',
    predicate: {},
  };
  const signer = {
    sign: async (data) => ({
      signature: crypto.sign('sha256', data, privateKey),
      key: { $case: 'publicKey', publicKey: publicKey.export({ type: 'spki', format: 'pem' }), hint: '' },
    }),
  };
  const bundle = await new DSSEBundleBuilder({ signer, witnesses: [] }).create({
    data: Buffer.from(JSON.stringify(statement)),
    type: 'application/vnd.in-toto+json',
  });
  console.log(JSON.stringify({
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }),
    bundle: bundleToJSON(bundle),
  }));
}

async function verifyBundle(keyFile, bundleFile, digest) {
  const key = crypto.createPublicKey(fs.readFileSync(keyFile));
  const bundle = bundleFromJSON(JSON.parse(fs.readFileSync(bundleFile, 'utf8')));
  const trust = toTrustMaterial(EMPTY_ROOT, () => ({ publicKey: key, validFor: () => true }));
  new Verifier(trust, { tlogThreshold: 0, ctlogThreshold: 0 }).verify(toSignedEntity(bundle));
  const statement = JSON.parse(bundle.content.dsseEnvelope.payload.toString());
  const [alg, hex] = digest.split(':');
  if (statement.predicateType !== 'https://sigstore.dev/cosign/sign/v1'
    || !statement.subject.some((s) => s.digest[alg] === hex)) {
    throw new Error(`the statement does not sign ${digest}`);
  }
  console.log('verified');
}

async function verifyKeyless(rootFile, payloadFile, signature, certFile, rekorFile, identity, issuer) {
  const payload = fs.readFileSync(payloadFile);
  const cert = new crypto.X509Certificate(fs.readFileSync(certFile));
  const rekor = JSON.parse(fs.readFileSync(rekorFile, 'utf8'));
  const body = JSON.parse(Buffer.from(rekor.Payload.body, 'base64'));
  // cosign's bundle annotation as the transparency log entry of a v0.1 Sigstore bundle.
  const bundle = bundleFromJSON({
    mediaType: 'application/vnd.dev.sigstore.bundle+json;version=0.1',
    verificationMaterial: {
      x509CertificateChain: { certificates: [{ rawBytes: cert.raw.toString('base64') }] },
      tlogEntries: [{
        logIndex: String(rekor.Payload.logIndex),
        logId: { keyId: Buffer.from(rekor.Payload.logID, 'hex').toString('base64') },
        kindVersion: { kind: body.kind, version: body.apiVersion },
        integratedTime: String(rekor.Payload.integratedTime),
        inclusionPromise: { signedEntryTimestamp: rekor.SignedEntryTimestamp },
        canonicalizedBody: rekor.Payload.body,
      }],
      timestampVerificationData: { rfc3161Timestamps: [] },
    },
    messageSignature: {
      messageDigest: {
        algorithm: 'SHA2_256',
        digest: crypto.createHash('sha256').update(payload).digest('base64'),
      },
      signature,
    },
  });
  const root = TrustedRoot.fromJSON(JSON.parse(fs.readFileSync(rootFile, 'utf8')));
  new Verifier(toTrustMaterial(root), { tlogThreshold: 1, ctlogThreshold: 1 }).verify(
    toSignedEntity(bundle, payload),
    { subjectAlternativeName: identity, extensions: { issuer } },
  );
  console.log('verified');
}

const [cmd, ...args] = process.argv.slice(2);
const run = {
  'verify-blob': verifyBlob,
  'sign-image': signImage,
  'verify-bundle': verifyBundle,
  'verify-keyless': verifyKeyless,
}[cmd];
if (!run) {
  console.error(`usage: cosign.js verify-blob KEY PAYLOAD SIG | sign-image DIGEST | verify-bundle KEY BUNDLE DIGEST | verify-keyless ROOT PAYLOAD SIG CERT REKOR IDENTITY ISSUER`);
  process.exit(2);
}
run(...args).catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});

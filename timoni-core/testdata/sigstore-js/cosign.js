// sigstore-js (the npm `sigstore` packages, an implementation of Sigstore independent of
// ours and of the Rust `sigstore` crate) doing cosign's two key-based jobs for the signature
// tests; run with NODE_PATH set to the node_modules holding `sigstore`.
//
//   node cosign.js verify-blob KEY.pub PAYLOAD SIGNATURE_BASE64
//     checks a `.sig` layer's signature of its simple-signing payload with the public key, as
//     `cosign verify --key` does for each layer; prints "verified".
//   node cosign.js sign-image sha256:HEX
//     generates a P-256 key and signs the image digest as `cosign sign --key` with the new
//     bundle format does: a DSSE envelope of an in-toto statement (predicate
//     https://sigstore.dev/cosign/sign/v1) in a v0.3 bundle with a public key hint; prints
//     {"publicKey": PEM, "bundle": BUNDLE}.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const { toMessageSignatureBundle, bundleToJSON } = require('@sigstore/bundle');
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

const [cmd, ...args] = process.argv.slice(2);
const run = { 'verify-blob': verifyBlob, 'sign-image': signImage }[cmd];
if (!run) {
  console.error(`usage: cosign.js verify-blob KEY PAYLOAD SIG | sign-image DIGEST`);
  process.exit(2);
}
run(...args).catch((e) => {
  console.error(e.stack || String(e));
  process.exit(1);
});

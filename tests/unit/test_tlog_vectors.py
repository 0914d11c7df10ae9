"""The transparency log's formats against the known answers of the implementations they follow:
the RFC 6962/9162 tree of transparency-dev/merkle, the signed notes of golang.org/x/mod's
sumdb/note, the examples of the C2SP specifications, and a real checkpoint cosigned by a witness.
"""

import base64
import json
from pathlib import Path

import pytest

from ledger.core.tlog import (
    Checkpoint,
    NoteError,
    ProofError,
    Signer,
    TilePath,
    Verifier,
    add_signature_lines,
    consistency_proof,
    consistency_proof_ranges,
    cosignature_message,
    empty_root,
    entries_path,
    entry_bundle,
    inclusion_proof,
    inclusion_proof_ranges,
    key_id,
    leaf_hash,
    note_parts,
    open_checkpoint,
    open_note,
    parse_tile_path,
    read_entry_bundle,
    root_of,
    sign_note,
    tile_path,
    tile_width,
    verify_consistency,
    verify_cosignature,
    verify_inclusion,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def b64(text: str) -> bytes:
    return base64.b64decode(text)


# The reference tree of transparency-dev/merkle (github.com/transparency-dev/merkle, commit
# 417fb0c3, testonly/constants.go: LeafInputs, NodeHashes, RootHashes; Apache 2.0, Google LLC).
LEAF_INPUTS = [bytes.fromhex(h) for h in (
    "", "00", "10", "2021", "3031", "40414243", "5051525354555657",
    "606162636465666768696a6b6c6d6e6f")]
NODE_HASHES = [[bytes.fromhex(h) for h in level] for level in (
    ("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
     "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
     "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
     "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
     "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
     "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
     "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
     "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1"),
    ("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
     "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
     "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
     "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
    ("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
     "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
    ("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",),
)]
#: RootHashes, by tree size from 0.
ROOTS = [bytes.fromhex(h) for h in (
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328")]
LEAF_HASHES = [leaf_hash(entry) for entry in LEAF_INPUTS]


def reference_subtree(start: int, end: int) -> bytes:
    return root_of(LEAF_HASHES[start:end])


# The proofs listed in transparency-dev/merkle's cmd/proofgen/main.go (inclusionProofs and
# consistencyProofs, over the same eight leaves). Its leaf numbers count from 1.
H = {h.hex()[:8]: h for level in NODE_HASHES for h in level}
PROOFGEN_INCLUSION = [
    (1, 1, []),
    (1, 8, ["96a296d2", "5f083f0a", "6b47aaf2"]),
    (6, 8, ["bc1a0643", "ca854ea1", "d37ee418"]),
    (3, 3, ["fac54203"]),
    (2, 5, ["6e340b9c", "5f083f0a", "bc1a0643"]),
]
PROOFGEN_CONSISTENCY = [
    (1, 1, []),
    (1, 8, ["96a296d2", "5f083f0a", "6b47aaf2"]),
    (6, 8, ["0ebc5d34", "ca854ea1", "d37ee418"]),
    (2, 5, ["5f083f0a", "bc1a0643"]),
    (6, 7, ["0ebc5d34", "b08693ec", "d37ee418"]),
]


def test_the_reference_tree_has_its_leaf_node_and_root_hashes():
    assert empty_root() == ROOTS[0] == root_of([])
    assert LEAF_HASHES == NODE_HASHES[0]
    for size in range(9):
        assert root_of(LEAF_HASHES[:size]) == ROOTS[size], size
    for level, hashes in enumerate(NODE_HASHES):
        for i, h in enumerate(hashes):
            assert reference_subtree(i << level, (i + 1) << level) == h, (level, i)


@pytest.mark.parametrize(("leaf", "size", "proof"), PROOFGEN_INCLUSION)
def test_the_inclusion_proofs_of_proofgen(leaf, size, proof):
    want = [H[h] for h in proof]
    assert inclusion_proof(leaf - 1, size, reference_subtree) == want
    verify_inclusion(leaf - 1, size, LEAF_HASHES[leaf - 1], want, ROOTS[size])


@pytest.mark.parametrize(("old", "new", "proof"), PROOFGEN_CONSISTENCY)
def test_the_consistency_proofs_of_proofgen(old, new, proof):
    want = [H[h] for h in proof]
    assert consistency_proof(old, new, reference_subtree) == want
    verify_consistency(old, new, ROOTS[old], ROOTS[new], want)


# The nodes of the proofs in transparency-dev/merkle's proof/proof_test.go (TestInclusion,
# TestConsistency): each node (level, index) is the leaves [index << level, (index + 1) << level);
# the nodes [begin:end) of a "rehash" are hashed into the one node they cover.
GO_INCLUSION_NODES = [
    # size, index, nodes, rehash
    (1, 0, [], None),
    (2, 0, [(0, 1)], None), (2, 1, [(0, 0)], None),
    (3, 1, [(0, 0), (0, 2)], (1, 2)),
    (7, 0, [(0, 1), (1, 1), (0, 6), (1, 2)], (2, 4)),
    (7, 1, [(0, 0), (1, 1), (0, 6), (1, 2)], (2, 4)),
    (7, 2, [(0, 3), (1, 0), (0, 6), (1, 2)], (2, 4)),
    (7, 3, [(0, 2), (1, 0), (0, 6), (1, 2)], (2, 4)),
    (7, 4, [(0, 5), (0, 6), (2, 0)], (1, 2)),
    (7, 5, [(0, 4), (0, 6), (2, 0)], (1, 2)),
    (7, 6, [(1, 2), (2, 0)], None),
    (4, 2, [(0, 3), (1, 0)], None),
    (5, 3, [(0, 2), (1, 0), (0, 4)], (2, 3)),
    (6, 3, [(0, 2), (1, 0), (1, 2)], (2, 3)),
    (6, 4, [(0, 5), (2, 0)], None),
    (15, 10, [(0, 11), (1, 4), (0, 14), (1, 6), (3, 0)], (2, 4)),
    (31, 24, [(0, 25), (1, 13), (0, 30), (1, 14), (3, 2), (4, 0)], (2, 4)),
    (95, 81, [(0, 80), (1, 41), (2, 21), (0, 94), (1, 46), (2, 22), (4, 4), (6, 0)], (3, 6)),
]
GO_CONSISTENCY_NODES = [
    # old size, new size, nodes, rehash
    (1, 2, [(0, 1)], None),
    (1, 4, [(0, 1), (1, 1)], None),
    (1, 6, [(0, 1), (1, 1), (1, 2)], (2, 3)),
    (2, 3, [(0, 2)], (0, 1)),
    (2, 8, [(1, 1), (2, 1)], None),
    (3, 7, [(0, 2), (0, 3), (1, 0), (0, 6), (1, 2)], (3, 5)),
    (4, 7, [(0, 6), (1, 2)], (0, 2)),
    (5, 7, [(0, 4), (0, 5), (0, 6), (2, 0)], (2, 3)),
    (6, 7, [(1, 2), (0, 6), (2, 0)], (1, 2)),
    (7, 8, [(0, 6), (0, 7), (1, 2), (2, 0)], None),
    *((n, n, [], None) for n in (1, 2, 3, 4, 5, 7, 8)),
    (2, 4, [(1, 1)], None),
    (3, 5, [(0, 2), (0, 3), (1, 0), (0, 4)], (3, 4)),
    (3, 6, [(0, 2), (0, 3), (1, 0), (1, 2)], (3, 4)),
    (4, 6, [(1, 2)], (0, 1)),
    (1, 7, [(0, 1), (1, 1), (0, 6), (1, 2)], (2, 4)),
    (10, 15, [(1, 4), (1, 5), (0, 14), (1, 6), (3, 0)], (2, 4)),
    (24, 31, [(3, 2), (0, 30), (1, 14), (2, 6), (4, 0)], (1, 4)),
    (81, 95, [(0, 80), (0, 81), (1, 41), (2, 21), (0, 94), (1, 46), (2, 22), (4, 4), (6, 0)],
     (4, 7)),
]


def go_ranges(nodes, rehash):
    ranges = [(index << level, (index + 1) << level) for level, index in nodes]
    if rehash:
        begin, end = rehash
        group = ranges[begin:end]
        ranges[begin:end] = [(min(r[0] for r in group), max(r[1] for r in group))]
    return ranges


@pytest.mark.parametrize(("size", "index", "nodes", "rehash"), GO_INCLUSION_NODES)
def test_inclusion_proofs_take_the_nodes_of_go(size, index, nodes, rehash):
    assert inclusion_proof_ranges(index, size) == go_ranges(nodes, rehash)


@pytest.mark.parametrize(("old", "new", "nodes", "rehash"), GO_CONSISTENCY_NODES)
def test_consistency_proofs_take_the_nodes_of_go(old, new, nodes, rehash):
    assert consistency_proof_ranges(old, new) == go_ranges(nodes, rehash)


@pytest.mark.parametrize(("index", "size"), [(0, 0), (1, 0), (2, 1), (3, 0), (8, 7)])
def test_no_inclusion_proof_for_a_leaf_outside_the_tree(index, size):
    # TestInclusion's errors, proof/proof_test.go.
    with pytest.raises(ValueError):
        inclusion_proof_ranges(index, size)


@pytest.mark.parametrize(("old", "new"), [(5, 0), (9, 8), (0, 5), (0, 0)])
def test_no_consistency_proof_from_nothing_or_backwards(old, new):
    # TestConsistency's errors, proof/proof_test.go.
    with pytest.raises(ValueError):
        consistency_proof_ranges(old, new)


# The verification probes of transparency-dev/merkle (testdata/inclusion and
# testdata/consistency, written by cmd/proofgen, read by proof/verify_test.go), copied into
# tests/fixtures/merkle-probes.json.
PROBES = json.loads((FIXTURES / "merkle-probes.json").read_text())
#: The one probe this module answers otherwise: it takes every hash to be 32 bytes, and Go does
#: not look at the roots when the two sizes are equal, so accepts roots of 12 bytes.
STRICTER = {"testdata/consistency/additional/sizes-are-equal-one-and-proof-is-empty.json"}


@pytest.mark.parametrize("probe", PROBES["inclusion"], ids=lambda p: p["file"][9:-5])
def test_the_inclusion_probes_of_go(probe):
    def verify():
        verify_inclusion(probe["leafIdx"], probe["treeSize"], b64(probe["leafHash"]),
                         [b64(h) for h in probe["proof"]], b64(probe["root"]))
    if probe["wantErr"]:
        with pytest.raises(ProofError):
            verify()
    else:
        verify()


@pytest.mark.parametrize("probe", PROBES["consistency"], ids=lambda p: p["file"][9:-5])
def test_the_consistency_probes_of_go(probe):
    def verify():
        verify_consistency(probe["size1"], probe["size2"], b64(probe["root1"]),
                           b64(probe["root2"]), [b64(h) for h in probe["proof"]])
    if probe["wantErr"] or probe["file"] in STRICTER:
        with pytest.raises(ProofError, match="12 bytes" if probe["file"] in STRICTER else None):
            verify()
    else:
        verify()


def test_the_probes_are_all_there():
    assert (len(PROBES["inclusion"]), len(PROBES["consistency"])) == (98, 98)
    assert sum(not p["wantErr"] for p in PROBES["inclusion"] + PROBES["consistency"]) == 12


# golang.org/x/mod sumdb/note (github.com/golang/mod, commit fe2ec04f, sumdb/note/note_test.go
# and example_test.go; BSD-style licence, The Go Authors).
PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
TEXT = ("If you think cryptography is the answer to your problem,\n"
        "then you don't know what your problem is.\n")
PETER_SIG = ("— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdng"
             "otpRZb6KE6RyyBwJnAM=\n")
ENOCH_SIG = ("— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnW"
             "Lox33WWd1RvMc+QQ=\n")


def test_peter_neumanns_key_signs_the_note_of_sumdb():
    signer = Signer.from_text(PETER_SKEY)
    assert signer.text() == PETER_SKEY
    assert signer.verifier().text() == PETER_VKEY
    assert sign_note(TEXT, signer) == TEXT + "\n" + PETER_SIG
    verifier = Verifier.from_text(PETER_VKEY)
    assert (verifier.name, verifier.key_id.hex(), verifier.alg) == ("PeterNeumann", "c74f20a3", 1)
    assert open_note(TEXT + "\n" + PETER_SIG, verifier) == TEXT


def test_the_key_of_a_zero_seed_is_enoch_roots():
    # ExampleSign_add_signatures: GenerateKey from a reader of zeros, so the seed is 32 zeros.
    enoch = Signer.from_seed("EnochRoot", bytes(32))
    assert enoch.verifier().text() == ENOCH_VKEY
    assert sign_note(TEXT, enoch) == TEXT + "\n" + ENOCH_SIG
    enoch_line = sign_note(TEXT, enoch).rpartition("\n\n")[2]
    assert add_signature_lines(TEXT + "\n" + PETER_SIG, [enoch_line]) == (
        TEXT + "\n" + PETER_SIG + ENOCH_SIG)


def test_open_takes_the_known_key_and_ignores_the_others():
    note = TEXT + "\n" + PETER_SIG + ENOCH_SIG
    assert open_note(note, Verifier.from_text(PETER_VKEY)) == TEXT
    assert open_note(note, Verifier.from_text(ENOCH_VKEY)) == TEXT
    other = Signer.from_seed("CarmenSandiego", bytes(range(32))).verifier()
    with pytest.raises(NoteError, match="no signature by key CarmenSandiego"):
        open_note(note, other)
    # Duplicated verified and unverified signatures: the repeats are skipped, as in Go.
    enoch_abcd = ENOCH_SIG[:60] + "ABCD" + ENOCH_SIG[60:]
    repeated = TEXT + "\n" + PETER_SIG + PETER_SIG + ENOCH_SIG + ENOCH_SIG + enoch_abcd
    assert open_note(repeated, Verifier.from_text(PETER_VKEY)) == TEXT


def test_a_bad_signature_by_the_known_key_is_named():
    note = TEXT + "\n" + PETER_SIG[:60] + "ABCD" + PETER_SIG[60:]
    with pytest.raises(NoteError, match=r"^invalid signature for key PeterNeumann\+c74f20a3$"):
        open_note(note, Verifier.from_text(PETER_VKEY))


@pytest.mark.parametrize("note", [
    TEXT,
    TEXT + "\n",
    TEXT + "\n" + PETER_SIG[:-1],
    "\x01" + TEXT + "\n" + PETER_SIG,
    # Go's "\xff": bytes that are not UTF-8; a str holds them as a lone surrogate.
    "\udcff" + TEXT + "\n" + PETER_SIG,
    TEXT + "\n" + "— Bad Name x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKv"
                  "qfqdngotpRZb6KE6RyyBwJnAM=",
    TEXT + "\n" + PETER_SIG + "Unexpected line.\n",
    TEXT + "\n" + PETER_SIG * 101,  # too many signatures
], ids=["text", "no-signature", "no-newline", "control", "not-utf8", "bad-name", "unexpected",
        "101-signatures"])
def test_malformed_notes_of_sumdb(note):
    with pytest.raises(NoteError, match="^malformed note"):
        open_note(note, Verifier.from_text(PETER_VKEY))
    with pytest.raises(NoteError, match="^malformed note"):
        note_parts(note)


def manglings(key: str):
    """Every part of the key but the whole, and the key with each byte one higher (as
    TestNewVerifier and TestNewSigner)."""
    for i in range(len(key) + 1):
        for j in range(i + 1, len(key) + 1):
            if (i, j) != (0, len(key)):
                yield key[i:j]
    for i in range(len(key)):
        yield key[:i] + chr(ord(key[i]) + 1) + key[i + 1:]


def test_every_mangling_of_a_verifier_key_is_refused():
    Verifier.from_text(PETER_VKEY)
    refused = 0
    for bad in [*manglings(PETER_VKEY),
                # A key of the wrong length, and one of an unknown type, each with its key ID.
                "PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==",
                "PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"]:
        with pytest.raises(NoteError):
            Verifier.from_text(bad)
        refused += 1
    assert refused > 2000


def test_every_mangling_of_a_signer_key_is_refused():
    Signer.from_text(PETER_SKEY)
    for bad in manglings(PETER_SKEY):
        with pytest.raises(NoteError):
            Signer.from_text(bad)


# transparency-dev/formats (note/note_cosigv1_test.go, TestCoSigV1NewVerifier and
# TestCosignatureTimestamp; Apache 2.0): verifier keys of types 0x01 and 0x04, and bad ones.
@pytest.mark.parametrize(("vkey", "alg"), [
    ("TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6", 0x01),  # a '+' in its base64
    ("remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2", 0x04),
])
def test_verifier_keys_of_both_types(vkey, alg):
    verifier = Verifier.from_text(vkey)
    assert verifier.alg == alg
    assert verifier.key_id == key_id(verifier.name, alg, verifier.public)
    assert verifier.text() == vkey


@pytest.mark.parametrize("vkey", [
    "bananas.sigstore.dev+12344556",
    "rekor.sigstore.dev+12345678+THIS_IS_NOT_BASE64!",
    "rekor.sigstore.dev+12345678+AwEB",
])
def test_bad_verifier_keys_of_formats(vkey):
    with pytest.raises(NoteError):
        Verifier.from_text(vkey)


def test_a_cosignature_is_a_key_id_a_timestamp_and_a_signature():
    line = ("— w ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWW"
            "OworDcFiEBYJXORmnFBOBA==\n")
    [(_, kid, payload)] = note_parts("x\n\n" + line)[1]
    assert (kid.hex(), len(payload), int.from_bytes(payload[:8], "big")) == (
        "646846b9", 72, 1727964367)


# The examples of the C2SP specifications (github.com/C2SP/C2SP, commit 5ba5ee83).
def test_the_example_of_signed_note():
    # signed-note.md, "Example": the verifier key and the note it verifies.
    verifier = Verifier.from_text(
        "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k")
    note = ("This is an example message.\n\n— example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6Tf"
            "Xppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n")
    assert open_note(note, verifier) == "This is an example message.\n"
    with pytest.raises(NoteError, match="invalid signature"):
        open_note(note.replace("example message", "example massage"), verifier)


def test_the_examples_of_tlog_checkpoint_and_tlog_cosignature():
    # tlog-checkpoint.md and tlog-cosignature.md: their keys are not published, so only the
    # form of the checkpoint, of its cosignature and of the message it signs is checked.
    note = ("example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
            "\n— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URY"
            "N7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
            "— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9d"
            "lrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n")
    text, parts = note_parts(note)
    checkpoint = Checkpoint.parse(text)
    assert (checkpoint.origin, checkpoint.size, checkpoint.body()) == (
        "example.com/behind-the-sofa", 20852163, text)
    witness, _, payload = parts[1]
    timestamp = int.from_bytes(payload[:8], "big")
    assert (witness, len(payload), timestamp) == ("witness.example.com/w1", 72, 1679315147)
    assert cosignature_message(text, timestamp) == (
        b"cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\n"
        b"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n")


# A real checkpoint: the staging CT log arche2025h1.staging.ct.transparency.dev, signed by the
# log (Ed25519, and RFC 6962 type 0x05) and cosigned by four witnesses, with the vkeys of the log
# and of the witness remora.n621.de (from github.com/florolf/tlog-scales, tests/test_signing.py,
# TestCheckpointVerification; remora's vkey is also in transparency-dev/formats' tests).
ARCHE = """arche2025h1.staging.ct.transparency.dev
1432088532
U7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=

— arche2025h1.staging.ct.transparency.dev zTM8sQAAAZ5W0WdjBAMARjBEAiBjW5IQf9pvsYLfQFX6hoGREPMHbdQ3urbllzalApkptQIgIpwtEroeW2BXaHAI4kJXFbon5Ch9MNL5zRNZ55lvGt0=
— arche2025h1.staging.ct.transparency.dev ui8GwCF1+kWqZrxGdhj4aX3gcw7XUlXQQabg/27lefwhUkzbC3NygNI75MdhL1bfTW9g8Ei59RA23oHP7Ry1k3ZFWwQ=
— transparency.dev/DEV:witness-little-garden 2AQqhwAAAABqEiEgzgFIqqhbUoDwjMWE6UP8nd8/KYTzwZ2rhIgcqoXHAwVkjZr4AscylP3v7sEodkRAErumC2q44vdgJY096st5BQ==
— witness1.smartit.nu/witness1 pIyCDwAAAABqEiEghIp82KWebrw7/oHQwlTAm3g2RKS4+eebl8eO0WH+/iEcxZ75W3u5hNI7TOQtmJbqmNWVuE0tgh0XwzdZsDsUAQ==
— remora.n621.de 2net5wAAAABqEiEgPlfF3V06o0Y+fHM+J5J9s27wgxxcOVSpZ/2g/KSiXCg9DEZI+aVCIobWX9sXTynk5XeU/zZ0WBxtqB0DrAWfBw==
— witness.stagemole.eu Z/euoAAAAABqEiEgw0i+7g2ENfDAWHmtRzCfKTHSDwYDJA2NmKeGi9Y8FtEyOUvVr+AJmIY/2TUFucgKi7lI7cUiOvKFYe/TmN9DAg==
"""
ARCHE_VKEY = ("arche2025h1.staging.ct.transparency.dev+ba2f06c0+AU0vHmlGCS/PdN8b2OaGmKprLI8HKM+dJ472x"
              "gFYh15f")
REMORA_VKEY = "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2"


def test_a_real_checkpoint_and_a_real_witness_cosignature():
    log, remora = Verifier.from_text(ARCHE_VKEY), Verifier.from_text(REMORA_VKEY)
    checkpoint = open_checkpoint(ARCHE, log)
    assert (checkpoint.origin, checkpoint.size) == (log.name, 1432088532)
    assert verify_cosignature(ARCHE, remora) == 1779573024
    clobbered = ARCHE.replace("\n1432088532\n", "\n42\n")
    with pytest.raises(NoteError, match="invalid signature for key arche2025h1"):
        open_checkpoint(clobbered, log)
    with pytest.raises(NoteError, match=r"invalid cosignature by remora.n621.de\+da77ade7"):
        verify_cosignature(clobbered, remora)
    with pytest.raises(NoteError, match="no signature by key example.com/foo"):
        open_checkpoint(ARCHE, Verifier.from_text(
            "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"))
    # A note key does not check cosignatures, nor a cosignature key the log's signature.
    with pytest.raises(NoteError, match="not a cosignature key"):
        verify_cosignature(ARCHE, log)
    with pytest.raises(NoteError, match="is a cosignature key"):
        open_note(ARCHE, remora)


# Tiles (C2SP tlog-tiles.md), and the tile paths of golang.org/x/mod's sumdb/tlog
# (tlog_test.go, tilePaths) without the height element that sumdb's paths have and C2SP's have
# not, and with C2SP's "entries" for sumdb's "data".
@pytest.mark.parametrize(("path", "tile"), [
    ("tile/0/x001/x234/067", TilePath(0, 1234067)),  # tlog-tiles.md
    ("tile/0/001", TilePath(0, 1)),
    ("tile/0/001.p/5", TilePath(0, 1, 5)),
    ("tile/5/x123/x456/078", TilePath(5, 123456078)),
    ("tile/5/x123/x456/078.p/2", TilePath(5, 123456078, 2)),
    ("tile/0/x003/x057/500", TilePath(0, 3057500)),
    ("tile/entries/x003/x057/500", TilePath(None, 3057500)),
    ("tile/entries/000.p/255", TilePath(None, 0, 255)),
    ("tile/63/000", TilePath(63, 0)),
    ("tile/1/x001/000", TilePath(1, 1000)),
])
def test_tile_paths(path, tile):
    assert parse_tile_path(path) == tile
    assert tile.path() == path
    if tile.level is None:
        assert entries_path(tile.index, tile.width) == path
    else:
        assert tile_path(tile.level, tile.index, tile.width) == path


@pytest.mark.parametrize("path", [
    "tile/5/123/456/078", "tile/-1/x123/x456/078",  # sumdb's bad paths
    "tile/0/x000/001", "tile/0/x001", "tile/0/1", "tile/0/0001", "tile/0/01", "tile/00/001",
    "tile/64/000", "tile/0/001.p/0", "tile/0/001.p/256", "tile/0/001.p/017", "tile/0/001.p/",
    "tile/0/001.p", "tile/0/001/", "tile/0", "tile/entries", "tiles/0/001", "/tile/0/001",
    "tile/data/001", "tile/entries/001.p/1x", "tile/0/+01", "tile/0/x001.p/5/000",
    "tile/0/x9223/x372/x036/x854/x775/808", "tile/0/x001/x002/x003/x004/x005/x006/x007/008",
])
def test_tile_paths_not_canonical(path):
    with pytest.raises(ValueError):
        parse_tile_path(path)


def test_the_tiles_of_a_tree_of_70000_and_of_256():
    # tlog-tiles.md, "Partial Tiles".
    assert [tile_width(0, n, 70000) for n in (0, 272, 273, 274)] == [256, 256, 112, 0]
    assert [tile_width(1, n, 70000) for n in (0, 1, 2)] == [256, 17, 0]
    assert [tile_width(2, n, 70000) for n in (0, 1)] == [1, 0]
    assert tile_width(3, 0, 70000) == 0
    assert [tile_width(0, 0, 256), tile_width(0, 1, 256), tile_width(1, 0, 256)] == [256, 0, 1]


def test_entry_bundles():
    # tlog-tiles.md, "Log entries": big-endian uint16 length-prefixed entries.
    assert entry_bundle([b"a", b"", b"\x00" * 300]) == (
        b"\x00\x01a" + b"\x00\x00" + b"\x01\x2c" + b"\x00" * 300)
    entries = [bytes([i]) * i for i in range(256)]
    assert read_entry_bundle(entry_bundle(entries)) == entries
    assert read_entry_bundle(b"") == []
    for bad in (b"\x00", b"\x00\x02a", b"\x00\x01a\x00"):
        with pytest.raises(ValueError, match="ends inside"):
            read_entry_bundle(bad)
    with pytest.raises(ValueError):
        entry_bundle([b"x" * 65536])
    with pytest.raises(ValueError):
        entry_bundle([b""] * 257)
    with pytest.raises(ValueError):
        read_entry_bundle(b"\x00\x00" * 257)

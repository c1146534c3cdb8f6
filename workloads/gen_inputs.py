#!/usr/bin/env python3
"""Deterministic inputs for coprof's real workloads (workloads/run-real.sh).

Writes, into OUT_DIR (default workloads/build/inputs):
  text.txt    English-like prose: common English words with a Zipf-like
              frequency, a long tail of made-up words, sentences and
              paragraphs (compresses about 3:1, like real text)
  random.bin  uniformly random bytes (incompressible: the compressors'
              worst case, mostly literal coding)
  data.csv    structured records: id, date, customer, region, product,
              quantity, unit price, status (repetitive fields, numbers)
  SHA256SUMS  the files' SHA-256, to check that a machine made the same bytes

Every byte comes from a 64-bit SplitMix generator written here with fixed
seeds, never from Python's `random` (whose algorithms may change between
versions), so the files are the same on every machine and Python 3 version.
Only the standard library is used.

Usage: gen_inputs.py [--scale F] [OUT_DIR]
  --scale F multiplies every size (default 1.0: 3 MiB of text, 1 MiB of
  random bytes, 3 MiB of CSV).
"""

import argparse
import bisect
import hashlib
import os
import sys

MASK = (1 << 64) - 1


class SplitMix64:
    """SplitMix64 (Steele, Lea and Flood 2014): a tiny, well-mixed PRNG."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n):
        """An integer in [0, n) (n far below 2**64, so the bias is negligible)."""
        return self.next() % n

    def unit(self):
        """A float in [0, 1)."""
        return (self.next() >> 11) / float(1 << 53)


COMMON = """the of and to a in is it you that he was for on are with as his they be
at one have this from or had by hot word but what some we can out other were all
there when up use your how said an each she which do their time if will way about
many then them write would like so these her long make thing see him two has look
more day could go come did number sound no most people my over know water than
call first who may down side been now find any new work part take get place made
live where after back little only round man year came show every good me give our
under name very through just form sentence great think say help low line differ
turn cause much mean before move right boy old too same tell does set three want
air well also play small end put home read hand port large spell add even land
here must big high such follow act why ask men change went light kind off need
house picture try us again animal point mother world near build self earth father
head stand own page should country found answer school grow study still learn
plant cover food sun four between state keep eye never last let thought city tree
cross farm hard start might story saw far sea draw left late run while press
close night real life few north open seem together next white children begin got
walk example ease paper group always music those both mark often letter until
mile river car feet care second book carry took science eat room friend began
idea fish mountain stop once base hear horse cut sure watch color face wood main
enough plain girl usual young ready above ever red list though feel talk bird
soon body dog family direct pose leave song measure door product black short
numeral class wind question happen complete ship area half rock order fire south
problem piece told knew pass since top whole king space heard best hour better
true during hundred five remember step early hold west ground interest reach fast
verb sing listen six table travel less morning ten simple several vowel toward war
lay against pattern slow center love person money serve appear road map rain rule
govern pull cold notice voice unit power town fine certain fly fall lead cry dark
machine note wait plan figure star box noun field rest correct able pound done
beauty drive stood contain front teach week final gave green oh quick develop
ocean warm free minute strong special mind behind clear tail produce fact street
inch multiply nothing course stay wheel full force blue object decide surface deep
moon island foot system busy test record boat common gold possible plane stead dry
wonder laugh thousand ago ran check game shape equate miss brought heat snow tire
bring yes distant fill east paint language among""".split()

SYLLABLES = "ka ri to mes lan dor vi el sul pra ne ton gar is qua bel or fin ux tal".split()


def zipf_table(n, s=1.07):
    """Cumulative weights of a Zipf(s) distribution over ranks 1..n."""
    cum, total = [], 0.0
    for r in range(1, n + 1):
        total += 1.0 / r**s
        cum.append(total)
    return cum, total


def text(size, rng):
    # Vocabulary: the common words first (most frequent), then made-up words.
    vocab = list(COMMON)
    seen = set(vocab)
    while len(vocab) < 6000:
        w = "".join(SYLLABLES[rng.below(len(SYLLABLES))] for _ in range(2 + rng.below(3)))
        if w not in seen:
            seen.add(w)
            vocab.append(w)
    cum, total = zipf_table(len(vocab))
    out, n = [], 0
    while n < size:
        para = []
        for _ in range(3 + rng.below(6)):
            words = []
            for _ in range(6 + rng.below(18)):
                words.append(vocab[bisect.bisect_left(cum, rng.unit() * total)])
            sentence = " ".join(words)
            if rng.below(5) == 0:
                cut = sentence.find(" ", len(sentence) // 2)
                if cut > 0:
                    sentence = sentence[:cut] + "," + sentence[cut:]
            para.append(sentence[0].upper() + sentence[1:] + ".?!"[int(rng.below(10) == 0) + int(rng.below(25) == 0)])
        p = " ".join(para)
        # Wrap at 72 columns, like a plain-text document.
        line, lines = "", []
        for w in p.split(" "):
            if line and len(line) + 1 + len(w) > 72:
                lines.append(line)
                line = w
            else:
                line = line + " " + w if line else w
        lines.append(line)
        chunk = "\n".join(lines) + "\n\n"
        out.append(chunk)
        n += len(chunk)
    return "".join(out)[:size].encode("ascii")


def random_bytes(size, rng):
    words = (size + 7) // 8
    return b"".join(rng.next().to_bytes(8, "little") for _ in range(words))[:size]


def csv(size, rng):
    regions = ["north", "south", "east", "west", "central"]
    statuses = ["shipped", "shipped", "shipped", "pending", "returned", "cancelled"]
    products = ["P%04d" % (rng.below(10000)) for _ in range(400)]
    prices = [rng.below(20000) + 99 for _ in range(len(products))]
    pcum, ptotal = zipf_table(len(products), 0.9)
    out = ["id,date,customer,region,product,quantity,unit_price,status\n"]
    n, i = len(out[0]), 0
    while n < size:
        i += 1
        k = bisect.bisect_left(pcum, rng.unit() * ptotal)
        row = "%d,2024-%02d-%02d,C%05d,%s,%s,%d,%d.%02d,%s\n" % (
            i,
            1 + rng.below(12),
            1 + rng.below(28),
            rng.below(20000),
            regions[rng.below(len(regions))],
            products[k],
            1 + rng.below(20),
            prices[k] // 100,
            prices[k] % 100,
            statuses[rng.below(len(statuses))],
        )
        out.append(row)
        n += len(row)
    # End on a whole record.
    data = "".join(out)
    return data[: data.rfind("\n", 0, size) + 1].encode("ascii")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every size by F")
    ap.add_argument("out", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "build", "inputs"))
    a = ap.parse_args()
    if not (a.scale > 0):
        ap.error("--scale must be positive")
    os.makedirs(a.out, exist_ok=True)
    mib = 1 << 20
    files = [
        ("text.txt", lambda: text(int(3 * mib * a.scale), SplitMix64(1))),
        ("random.bin", lambda: random_bytes(int(1 * mib * a.scale), SplitMix64(2))),
        ("data.csv", lambda: csv(int(3 * mib * a.scale), SplitMix64(3))),
    ]
    sums = []
    for name, make in files:
        data = make()
        path = os.path.join(a.out, name)
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        sums.append("%s  %s\n" % (hashlib.sha256(data).hexdigest(), name))
        print("gen-inputs: %s %d bytes" % (path, len(data)))
    with open(os.path.join(a.out, "SHA256SUMS"), "w") as f:
        f.writelines(sums)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Extract XCOPA's human translations of COPA, aligned to the English COPA items they translate.

usage: extract.py XCOPA_GIT_DIR BALANCED_COPA_GIT_DIR [--out DIR]
  XCOPA (cambridgeltl/xcopa): data/<lang>/val.<lang>.jsonl, 100 items per language, each the
  translation of COPA development item 401 + idx (checked: the Italian idx 0 "L'uomo apri il
  rubinetto" is item 401 "The man turned on the faucet."). The test files translate COPA test items
  501-1000, whose English text neither repository holds: not read.
  English: balanced-copa-dev-all.xml (Balanced-COPA/Balanced-COPA), the 500 COPA development items
  (ids 1-500; the mirrored ids 1001-1500 are not read).
Layout, both sides: the premise, then "A. <alternative>" and "B. <alternative>" lines (the
translation in the translator's order of the alternatives). Ids: copa/<COPA id>.

Also written, to ../xcopa_gmt/: XCOPA's data-gmt/<lang>/val.<lang>.jsonl, each human translation put
back into English by Google Translate (made by the XCOPA authors; no Quechua file): English round-trip
paraphrases of the same one-sentence items, for the English route.
"""

import argparse
import json
import os
import subprocess
import xml.etree.ElementTree as ET

LANGS = ("et", "ht", "id", "it", "qu", "sw", "ta", "th", "tr", "vi", "zh")
GMT_LANGS = tuple(lang for lang in LANGS if lang != "qu")


def git_show(d, ref):
    return subprocess.run(["git", "--git-dir", d, "show", ref], check=True, capture_output=True).stdout.decode("utf-8-sig")


def layout(premise, alternatives):
    return premise.strip() + "\n" + "\n".join(f"{k}. {a.strip()}" for k, a in zip("AB", alternatives, strict=True))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("xcopa")
    ap.add_argument("bcopa")
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    root = ET.fromstring(git_show(a.bcopa, "HEAD:balanced-copa-dev-all.xml").encode())
    sources = []
    for item in root.iter("item"):
        cid = int(item.get("id"))
        if cid <= 500:
            sources.append({"id": f"copa/{cid}", "text": layout(item.findtext("p"), [item.findtext("a1"), item.findtext("a2")])})
    assert len(sources) == 500, len(sources)
    variants = []
    for lang in LANGS:
        for line in git_show(a.xcopa, f"HEAD:data/{lang}/val.{lang}.jsonl").splitlines():
            r = json.loads(line)
            text = layout(r["premise"], [r["choice1"], r["choice2"]])
            variants.append({"source": f"copa/{401 + int(r['idx'])}", "kind": "translation", "lang": lang, "text": text})
    with open(os.path.join(a.out, "sources.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(s, ensure_ascii=False) + "\n" for s in sources)
    with open(os.path.join(a.out, "variants.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(v, ensure_ascii=False) + "\n" for v in variants)
    gmt = []
    for lang in GMT_LANGS:
        for line in git_show(a.xcopa, f"HEAD:data-gmt/{lang}/val.{lang}.jsonl").splitlines():
            r = json.loads(line)
            text = layout(r["premise"], [r["choice1"], r["choice2"]])
            gmt.append(
                {"source": f"copa/{401 + int(r['idx'])}", "kind": "back_translation", "lang": "en", "subtype": f"gmt_{lang}", "text": text}
            )
    out_gmt = os.path.join(a.out, os.pardir, "xcopa_gmt")
    os.makedirs(out_gmt, exist_ok=True)
    with open(os.path.join(out_gmt, "sources.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(s, ensure_ascii=False) + "\n" for s in sources)
    with open(os.path.join(out_gmt, "variants.jsonl"), "w", encoding="utf-8") as f:
        f.writelines(json.dumps(v, ensure_ascii=False) + "\n" for v in gmt)
    print(len(sources), "sources;", len(variants), "variants;", len(gmt), "English round trips")


if __name__ == "__main__":
    main()

"""Write ``detect_secrets-<version>.json`` from the installed detect-secrets package.

Usage (with ``pip install detect-secrets==1.5.0``, the version pinned in the dev extra)::

    python -m regista.secret_rules._vendor

The patterns are copied as detect-secrets ships them (its plugins' ``denylist``), with
their flags. What regista adds to each is its own and says how the writer uses a pattern
on JSON text: the literal ``keywords`` its one-pass search looks for (a pattern can only
match where one of them is), the ``kind`` of the marker, which ``group`` is the secret,
the characters a token may go on with past the match (``extend``), whether the secret
is a ``block`` that runs to its END line, and how far before its keyword a match may begin
(``lead``; ``-1``: anywhere, the pattern is searched for in the whole line). A
``json_regex`` says the same as the pattern of JSON text (:func:`for_json`: ``.`` is any
character of the same string, an escape such as ``\\n`` the white space it stands for).
Plugins and patterns left out are listed with the reason.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import sys
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
VERSION = "1.5.0"

#: plugin module, class -> how regista uses each of its patterns (by index).
TAKEN: dict[tuple[str, str], dict[str, Any]] = {
    ("artifactory", "ArtifactoryDetector"): {
        "kind": "artifactory_token",
        "patterns": [
            {"keywords": ["AKC"], "lead": 1},
            {"skip": "its keyword would be 'AP': found in most code and in every base64 run"},
        ],
    },
    ("aws", "AWSKeyDetector"): {
        "kind": "aws_access_key_id",
        "patterns": [
            {"keywords": ["A3T", "ABIA", "ACCA", "AKIA", "ASIA"]},
            {"kind": "aws_secret_access_key", "keywords": ["aws"], "group": 1},
        ],
    },
    ("azure_storage_key", "AzureStorageKeyDetector"): {
        "kind": "azure_storage_key",
        "patterns": [{"keywords": ["AccountKey="], "extend": "+/="}],
    },
    ("basic_auth", "BasicAuthDetector"): {
        "kind": "url_password",
        "patterns": [{"keywords": ["://"], "group": 1}],
    },
    ("github_token", "GitHubTokenDetector"): {
        "kind": "github_token",
        "patterns": [{"keywords": ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]}],
    },
    ("gitlab_token", "GitLabTokenDetector"): {
        "kind": "gitlab_token",
        "patterns": [
            {"keywords": ["glpat-", "gldt-", "glft-", "glsoat-", "glrt-"]},
            {"keywords": ["GR1348941"]},
            {"keywords": ["glcbt-"]},
            {"keywords": ["glimt-"]},
            {"keywords": ["glptt-"]},
            {"keywords": ["glagent-"]},
            {"keywords": ["gloas-"]},
        ],
    },
    ("jwt", "JwtTokenDetector"): {
        "kind": "jwt",
        # the pattern ends lazily (detect-secrets decodes the header to decide): the
        # signature is taken by going on over the token's characters
        "patterns": [{"keywords": ["eyJ"], "extend": "-_.+/="}],
    },
    ("mailchimp", "MailchimpDetector"): {
        "kind": "mailchimp_key",
        "patterns": [{"keywords": ["-us"], "lead": 32}],
    },
    ("npm", "NpmDetector"): {
        "kind": "npm_token",
        "patterns": [{"keywords": ["_authToken="], "group": 1, "lead": -1}],
    },
    ("openai", "OpenAIDetector"): {
        "kind": "openai_api_key",
        "patterns": [{"keywords": ["T3BlbkFJ"], "lead": -1}],
    },
    ("private_key", "PrivateKeyDetector"): {
        "kind": "private_key",
        # one keyword for all the headers (fewer keywords keep the one-pass search fast)
        "patterns": [
            {"keywords": ["PRIVATE KEY"], "block": True, "lead": 10},
            {"keywords": ["PRIVATE KEY"], "block": True, "lead": 9},
            {"keywords": ["PRIVATE KEY"], "block": True, "lead": 14},
            {"keywords": ["PRIVATE KEY"], "block": True, "lead": 10},
            {"keywords": ["PRIVATE KEY"], "block": True, "lead": 6},
            {"keywords": ["PRIVATE KEY"], "block": True, "lead": 10},
            {"keywords": ["PRIVATE KEY"], "block": True, "lead": 21},
            {"keywords": ["PuTTY-User-Key-File-"], "block": True},
        ],
    },
    ("pypi_token", "PypiTokenDetector"): {
        "kind": "pypi_token",
        "patterns": [
            {"keywords": ["pypi-AgEIcHlwaS5vcmc"]},
            {"keywords": ["pypi-AgENdGVzdC5weXBp"]},
        ],
    },
    ("sendgrid", "SendGridDetector"): {
        "kind": "sendgrid_key",
        "patterns": [{"keywords": ["SG."]}],
    },
    ("slack", "SlackDetector"): {
        "kind": "slack_token",
        "patterns": [{"keywords": ["xox"]}, {"keywords": ["https://hooks.slack.com/services/"]}],
    },
    ("square_oauth", "SquareOAuthDetector"): {
        "kind": "square_oauth_secret",
        "patterns": [{"keywords": ["sq0csp-"]}],
    },
    ("stripe", "StripeDetector"): {
        "kind": "stripe_key",
        "patterns": [{"keywords": ["rk_live_", "sk_live_"]}],
    },
}

#: What is not taken, and why.
LEFT_OUT = {
    "DiscordBotTokenDetector": "no literal to find it by: every line would be searched",
    "TelegramBotTokenDetector": "no literal to find it by: every line would be searched",
    "TwilioKeyDetector": "its keywords would be 'AC' and 'SK': found in most code and in every "
    "base64 run, they made writing a trace with images 10 times slower",
    "Base64HighEntropyString": "entropy, not a shape: base64 images and hashes would go",
    "HexHighEntropyString": "entropy, not a shape: commit and content hashes would go",
    "KeywordDetector": "any value named like a password: too many false positives in code",
    "IPPublicDetector": "an IP address is not a secret",
    "CloudantDetector": "a keyword and entropy rule, no shape of its own",
    "IbmCloudIamDetector": "a keyword and entropy rule, no shape of its own",
    "IbmCosHmacDetector": "a keyword and entropy rule, no shape of its own",
    "SoftlayerDetector": "a keyword and entropy rule, no shape of its own",
}


#: How a pattern written for plain text reads JSON text: an escape (``\\n``, ``\\t``) stands
#: for the white space it encodes, and a backslash is never part of a token.
_FOR_JSON = (
    ('(?:\\s|"|$)', '(?:\\s|"|$|\\\\[nrtfb])'),
    ('(?:\\s|=|:|"|^)', '(?:\\s|=|:|"|^|(?<=\\\\[nrtfb]))'),
    ("\\s]", "\\s\\\\]"),
    ("[\\'\\\"]", "\\\\?[\\'\\\"]"),
)


def for_json(regex: str) -> str:
    """``regex`` as it must read JSON text (the same as plain text, escapes decoded): ``.``
    is any character of the same JSON string (``[^"]``), and an escape stands for the white
    space it encodes."""
    out, i, in_class = [], 0, False
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            out.append(regex[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == ".":
            ch = '[^"]'
        out.append(ch)
        i += 1
    regex = "".join(out)
    for plain, json in _FOR_JSON:
        regex = regex.replace(plain, json)
    return regex


def _flags(pattern: re.Pattern[str]) -> list[str]:
    out = []
    if pattern.flags & re.IGNORECASE:
        out.append("IGNORECASE")
    if pattern.flags & re.MULTILINE:
        out.append("MULTILINE")
    return out


def build() -> dict[str, Any]:
    """The rule file's content, from the installed detect-secrets."""
    version = importlib.metadata.version("detect-secrets")
    if version != VERSION:
        raise SystemExit(f"detect-secrets {VERSION} is pinned; {version} is installed")
    rules = []
    skipped: dict[str, str] = {}
    for (module, cls), how in TAKEN.items():
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)
        denylist = list(plugin.denylist)
        if len(denylist) != len(how["patterns"]):
            raise SystemExit(f"{cls}: {len(denylist)} patterns, {len(how['patterns'])} described")
        for n, (pattern, use) in enumerate(zip(denylist, how["patterns"], strict=True)):
            if "skip" in use:
                skipped[f"{cls}/{n}"] = use["skip"]
                continue
            rules.append(
                {
                    "id": f"{cls}/{n}",
                    "regex": pattern.pattern,
                    **(
                        {"json_regex": for_json(pattern.pattern)}
                        if for_json(pattern.pattern) != pattern.pattern
                        else {}
                    ),
                    "flags": _flags(pattern),
                    "kind": use.get("kind", how["kind"]),
                    "keywords": use["keywords"],
                    "group": use.get("group", 0),
                    "extend": use.get("extend", ""),
                    "block": use.get("block", False),
                    "lead": use.get("lead", 0),
                }
            )
    return {
        "source": "detect-secrets",
        "version": version,
        "license": "Apache-2.0 (LICENSE.detect-secrets)",
        "home": "https://github.com/Yelp/detect-secrets",
        "left_out": {**LEFT_OUT, **skipped},
        "rules": rules,
    }


def main() -> int:
    data = build()
    out = HERE / f"detect_secrets-{data['version']}.json"
    out.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"wrote {out} ({len(data['rules'])} patterns)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

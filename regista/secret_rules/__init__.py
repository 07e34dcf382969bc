"""The secret shapes that redaction replaces, as data (see :mod:`regista.redact`).

- ``detect_secrets-1.5.0.json``: the patterns of detect-secrets 1.5.0 (Yelp, Apache-2.0,
  ``LICENSE.detect-secrets``), copied by :mod:`regista.secret_rules._vendor` with what
  regista adds to use them on JSON text;
- ``regista.json``: the shapes detect-secrets 1.5.0 does not ship (Anthropic, Hugging Face,
  npm and Google keys, bearer and basic credentials, AWS secrets by their labels, passwords
  in URLs that hold ``:`` or ``@``, private key blocks cut before their END line), in the
  same form.
"""

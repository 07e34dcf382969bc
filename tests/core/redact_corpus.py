"""Secret shapes for the redaction tests: every shape the rule files cover, each a made-up
value in the shape of a real one (none is a real credential).

``ISSUE_SHAPES``: shapes that once reached traces unredacted. ``BY_RULE``: one sample per
pattern of the rule files, by the pattern's ``source/id`` (a test checks none is missing).
Each case is ``(text, kind, secret)``: ``secret`` must not be left in the redacted text.
"""

from __future__ import annotations

Case = tuple[str, str, str]

_AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
_JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
_PEM_BODY = "MIIEowIBAAKCAQEA1b2c3d4e5f6\\nq9w8e7r6t5y4u3i2o1p0"

ISSUE_SHAPES: list[Case] = [
    (
        "HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        "huggingface_token",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    ),
    (
        "//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "npm_token",
        "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    (
        "publish with npm_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0PpOoNn please",
        "npm_token",
        "npm_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0PpOoNn",
    ),
    (f"the cookie held {_JWT} then", "jwt", _JWT.split(".")[2]),
    ("postgres://admin:pa:ss:w0rd@db.internal:5432/orders", "url_password", "pa:ss:w0rd"),
    ("redis://app:p@ssw0rd!x@cache.internal:6379/0", "url_password", "ssw0rd!x"),
    ("mongodb+srv://svc:Tr0ub4dor@3@cluster0.example.net/db", "url_password", "Tr0ub4dor"),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBGE5x2kBCADc7d9a1b2c3\n"
        "=abcd\n-----END PGP PRIVATE KEY BLOCK-----",
        "private_key",
        "lQOYBGE5x2kBCADc7d9a1b2c3",
    ),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1b2c3d4e5f6\nq9w8e7r6t5y4u3i2o1p0",
        "private_key",
        "q9w8e7r6t5y4u3i2o1p0",
    ),
    (
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0\n"
        "-----END ENCRYPTED PRIVATE KEY-----",
        "private_key",
        "MIIFHDBOBgkqhkiG9w0BBQ0",
    ),
    (f"AWS Secret Access Key: {_AWS_SECRET}", "aws_secret_access_key", _AWS_SECRET),
    (
        "User name,Password,Access key ID,Secret access key,Console login link\n"
        f"deploy,,AKIAIOSFODNN7EXAMPLE,{_AWS_SECRET},https://example.signin.aws.amazon.com\n",
        "aws_secret_access_key",
        _AWS_SECRET,
    ),
    (f"export keys AKIAIOSFODNN7EXAMPLE {_AWS_SECRET}", "aws_secret_access_key", _AWS_SECRET),
    (
        f'{{"AccessKeyId": "ASIAY34FZKBOKMUTVV7A", "SecretAccessKey": "{_AWS_SECRET}"}}',
        "aws_secret_access_key",
        _AWS_SECRET,
    ),
    (f"AWS_SECRET_ACCESS_KEY={_AWS_SECRET}", "aws_secret_access_key", _AWS_SECRET),
]

BY_RULE: dict[str, Case] = {
    # detect-secrets 1.5.0
    "detect-secrets/ArtifactoryDetector/0": (
        "token: AKCp8jQ8tU6dwWHJJD3q2nGV5x",
        "artifactory_token",
        "AKCp8jQ8tU6dwWHJJD3q2nGV5x",
    ),
    "detect-secrets/AWSKeyDetector/0": (
        "key id AKIAIOSFODNN7EXAMPL3 here",
        "aws_access_key_id",
        "AKIAIOSFODNN7EXAMPL3",
    ),
    "detect-secrets/AWSKeyDetector/1": (
        f"aws_token = '{_AWS_SECRET}'",
        "aws_secret_access_key",
        _AWS_SECRET,
    ),
    "detect-secrets/AzureStorageKeyDetector/0": (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
        + "Ab1Cd2Ef3Gh4" * 7
        + "Ab1Cd==;EndpointSuffix=core.windows.net",
        "azure_storage_key",
        "Ab1Cd2Ef3Gh4Ab1Cd2Ef3Gh4",
    ),
    "detect-secrets/BasicAuthDetector/0": (
        "https://bob:hunter2pass@git.example.com/repo",
        "url_password",
        "hunter2pass",
    ),
    "detect-secrets/GitHubTokenDetector/0": (
        "ghs_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
        "github_token",
        "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    ),
    "detect-secrets/GitLabTokenDetector/0": (
        "glpat-xY9zA8bC7dE6fG5hI4jK",
        "gitlab_token",
        "xY9zA8bC7dE6fG5hI4jK",
    ),
    "detect-secrets/GitLabTokenDetector/1": (
        "GR1348941aB3cD5eF7gH9iJ1kL3mN5",
        "gitlab_token",
        "aB3cD5eF7gH9iJ1kL3mN5",
    ),
    "detect-secrets/GitLabTokenDetector/2": (
        "glcbt-6f_aB3cD5eF7gH9iJ1kL3mN5",
        "gitlab_token",
        "aB3cD5eF7gH9iJ1kL3mN5",
    ),
    "detect-secrets/GitLabTokenDetector/3": (
        "glimt-aB3cD5eF7gH9iJ1kL3mN5oP7q",
        "gitlab_token",
        "aB3cD5eF7gH9iJ1kL3mN5oP7q",
    ),
    "detect-secrets/GitLabTokenDetector/4": (
        "glptt-" + "aB3cD5eF7g" * 4,
        "gitlab_token",
        "aB3cD5eF7g" * 4,
    ),
    "detect-secrets/GitLabTokenDetector/5": (
        "glagent-" + "aB3cD5eF7g" * 6,
        "gitlab_token",
        "aB3cD5eF7g" * 6,
    ),
    "detect-secrets/GitLabTokenDetector/6": (
        "gloas-" + "aB3cD5eF" * 8,
        "gitlab_token",
        "aB3cD5eF" * 8,
    ),
    "detect-secrets/JwtTokenDetector/0": (_JWT, "jwt", _JWT.split(".")[1]),
    "detect-secrets/MailchimpDetector/0": (
        "apikey 0123456789abcdef0123456789abcdef-us12",
        "mailchimp_key",
        "0123456789abcdef0123456789abcdef",
    ),
    "detect-secrets/NpmDetector/0": (
        "//registry.npmjs.org/:_authToken=12345678-abcd-ef01-2345-6789abcdef01",
        "npm_token",
        "12345678-abcd-ef01-2345-6789abcdef01",
    ),
    "detect-secrets/OpenAIDetector/0": (
        "sk-abcdefghijABCDEFGHIJT3BlbkFJabcdefghijABCDEFGHIJ",
        "openai_api_key",
        "T3BlbkFJabcdefghijABCDEFGHIJ",
    ),
    "detect-secrets/PrivateKeyDetector/0": (
        f"-----BEGIN DSA PRIVATE KEY-----\\n{_PEM_BODY}\\n-----END DSA PRIVATE KEY-----",
        "private_key",
        "q9w8e7r6t5y4u3i2o1p0",
    ),
    "detect-secrets/PrivateKeyDetector/1": (
        f"-----BEGIN EC PRIVATE KEY-----\\n{_PEM_BODY}\\n-----END EC PRIVATE KEY-----",
        "private_key",
        "q9w8e7r6t5y4u3i2o1p0",
    ),
    "detect-secrets/PrivateKeyDetector/2": (
        f"-----BEGIN OPENSSH PRIVATE KEY-----\\n{_PEM_BODY}\\n-----END OPENSSH PRIVATE KEY-----",
        "private_key",
        "q9w8e7r6t5y4u3i2o1p0",
    ),
    "detect-secrets/PrivateKeyDetector/3": (
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\\n{_PEM_BODY}"
        ""
        "\\n-----END PGP PRIVATE KEY BLOCK-----",
        "private_key",
        "q9w8e7r6t5y4u3i2o1p0",
    ),
    "detect-secrets/PrivateKeyDetector/4": (
        f"-----BEGIN PRIVATE KEY-----\\n{_PEM_BODY}\\n-----END PRIVATE KEY-----",
        "private_key",
        "q9w8e7r6t5y4u3i2o1p0",
    ),
    "detect-secrets/PrivateKeyDetector/5": (
        f"-----BEGIN RSA PRIVATE KEY-----\\n{_PEM_BODY}\\n-----END RSA PRIVATE KEY-----",
        "private_key",
        "q9w8e7r6t5y4u3i2o1p0",
    ),
    "detect-secrets/PrivateKeyDetector/6": (
        f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\\n{_PEM_BODY}"
        ""
        "\\n---- END SSH2 ENCRYPTED PRIVATE KEY ----",
        "private_key",
        "q9w8e7r6t5y4u3i2o1p0",
    ),
    "detect-secrets/PrivateKeyDetector/7": (
        f"PuTTY-User-Key-File-2: ssh-rsa\\nPrivate-Lines: 14\\n{_PEM_BODY}",
        "private_key",
        "q9w8e7r6t5y4u3i2o1p0",
    ),
    "detect-secrets/PypiTokenDetector/0": (
        "pypi-AgEIcHlwaS5vcmc" + "Ab1Cd2Ef3G" * 8,
        "pypi_token",
        "Ab1Cd2Ef3G" * 8,
    ),
    "detect-secrets/PypiTokenDetector/1": (
        "pypi-AgENdGVzdC5weXBpLm9yZw" + "Ab1Cd2Ef3G" * 8,
        "pypi_token",
        "Ab1Cd2Ef3G" * 8,
    ),
    "detect-secrets/SendGridDetector/0": (
        "SG.aB3cD5eF7gH9iJ1kL3mN5o.aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX5yZ7aB3cD5e",
        "sendgrid_key",
        "aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX5yZ7aB3cD5e",
    ),
    "detect-secrets/SlackDetector/0": (
        "xoxp-1234567890-0987654321-abcdef0123",
        "slack_token",
        "abcdef0123",
    ),
    "detect-secrets/SlackDetector/1": (
        "https://hooks.slack.com/services/T0ABCDEF1/B0ABCDEF2/aB3cD5eF7gH9iJ1kL3mN5oP7",
        "slack_token",
        "aB3cD5eF7gH9iJ1kL3mN5oP7",
    ),
    "detect-secrets/SquareOAuthDetector/0": (
        "sq0csp-" + "aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT1uV3wX5yZ7aB3c",
        "square_oauth_secret",
        "aB3cD5eF7gH9iJ1kL3mN5oP7qR9sT",
    ),
    "detect-secrets/StripeDetector/0": (
        "rk_live_aB3cD5eF7gH9iJ1kL3mN5oP7",
        "stripe_key",
        "aB3cD5eF7gH9iJ1kL3mN5oP7",
    ),
    # regista's own
    "regista/private-key-block": (
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBg\n-----END ENCRYPTED PRIVATE KEY-----",
        "private_key",
        "MIIFHDBOBg",
    ),
    "regista/anthropic": (
        "sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXcVbNm-_AbCdEf",
        "anthropic_api_key",
        "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0L",
    ),
    "regista/openai": (
        "sk-proj-4fT9kQ2mZ8xR1vB7nL3pW6yH0cJ5dS",
        "openai_api_key",
        "4fT9kQ2mZ8xR1vB7nL3pW6yH0cJ5dS",
    ),
    "regista/huggingface": (
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
        "huggingface_token",
        "AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    ),
    "regista/npm": (
        "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "npm_token",
        "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    "regista/github-fine-grained": (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP",
        "github_token",
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP",
    ),
    "regista/google": (
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        "google_api_key",
        "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    ),
    "regista/stripe": ("sk_test_51HxYzAbCdEfGhIjKlMnOp", "stripe_key", "51HxYzAbCdEfGhIjKlMnOp"),
    "regista/slack": ("xoxb-1234567890-abcdefghijKL", "slack_token", "abcdefghijKL"),
    "regista/bearer": (
        "Authorization: Bearer Zx9Qw8Er7Ty6Ui5Op4As3Df2",
        "bearer_token",
        "Zx9Qw8Er7Ty6Ui5Op4As3Df2",
    ),
    "regista/basic": (
        "Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==",
        "basic_auth",
        "dXNlcjpwYXNzd29yZDEyMw==",
    ),
    "regista/url-password": (
        "amqp://guest:g:u@e@st@rabbit.internal:5672/",
        "url_password",
        "g:u@e@st",
    ),
    "regista/aws-secret-after-key-id": (
        f"AKIAIOSFODNN7EXAMPLE,{_AWS_SECRET}",
        "aws_secret_access_key",
        _AWS_SECRET,
    ),
    "regista/aws-secret-labelled": (
        f"aws secret key: {_AWS_SECRET}",
        "aws_secret_access_key",
        _AWS_SECRET,
    ),
    "regista/secret-access-key-labelled": (
        f"secretAccessKey = {_AWS_SECRET}",
        "aws_secret_access_key",
        _AWS_SECRET,
    ),
}

#: Look-alikes that must come back as they were (code, prose, hashes, URLs, ids).
LOOK_ALIKES = [
    "scikit-learn is spelled sk-learn-is-a-python-library sometimes",
    "task-1234567890abcdefghij",
    "the desk-lamp-model-2000-deluxe-edition is back",
    "Asia and AKIA are words; AKIA123 is too short",
    "a bearer of good news; Bearer token required",
    "http://example.com:8080/path and user@example.com and https://user@host/x",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "ghp_short and xoxb-1 and AIza-short",
    "secret_access_key is the name of a setting",
    "basic authorization rules apply",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b and sha256 "
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "hf_hub_download(repo_id='bert-base-uncased', filename='config.json')",
    "npm_config_registry and npm_lifecycle_event are npm's variables",
    "eyJ is how base64 of a JSON object begins",
    "see https://learn.microsoft.com/en-us/azure/storage and en-us-1",
    "APPLICATION_SETTINGS and APIs and AKCs",
    "ssh://git@github.com:owner/repo.git and git@host:path",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
]

"""The words of the secret guard: what names a secret, what joins it to its value, what is talk.

A secret is said as keyword, separator, value ("my password is: hunter22", "PIN 1234",
"Passwort = x", "密碼是x"), the way a secret scanner's keyword rules read code (detect-secrets'
keyword plugin, gitleaks' generic rule), in Chinese, English, German, French, Spanish,
Italian, Portuguese and Dutch. A space in a keyword stands for one optional space, ``_``,
``-`` or ``.`` ("api key", "api_key", "apikey", "wi-fi key").
"""

from __future__ import annotations

from typing import Literal

SecretKind = Literal[
    "password",
    "card_number",
    "api_key",
    "private_key",
    "national_id",
    "card_security_code",
    "pin_code",
    "bank_account",
]


def _words(text: str) -> frozenset[str]:
    """The words of ``text``, split at white space (long lists read better as words)."""
    return frozenset(text.split())


KEYWORDS: dict[SecretKind, tuple[str, ...]] = {
    "password": (
        # en
        "password", "passwd", "passcode", "passphrase", "pass word", "pass phrase", "pwd", "pw",
        "wifi key", "wi fi key", "wlan key", "wpa key", "wpa2 key", "wep key", "network key",
        "router key", "recovery key", "recovery code", "backup code", "unlock code",
        "door code", "gate code", "alarm code", "lock code", "safe code", "access code",
        "login code", "master key", "security key", "safe combination", "lock combination",
        "padlock combination", "locker combination", "security answer", "secret answer",
        "memorable word", "memorable information",
        "pass code", "pswd", "psw", "pword",
        # weak: a value only with a separator and a digit (see WEAK_KEYWORDS)
        "pass", "wifi", "wi fi", "wlan", "login", "log in", "sign in", "bank", "router",
        "combination", "combo",
        # de / fr / es / it / pt / nl
        "passwort", "kennwort", "zugangscode", "wlan schlüssel", "wlan schluessel",
        "netzwerkschlüssel", "sicherheitsschlüssel", "türcode",
        "mot de passe", "mdp", "code d'accès", "code d'acces", "code secret", "clé wifi",
        "cle wifi", "clé wi fi", "clé réseau", "clé de sécurité",
        "contraseña", "contrasena", "contraseñas", "clave", "código de acceso",
        "codigo de acceso",
        "parola d'ordine", "parola chiave", "chiave wifi", "codice di accesso",
        "senha", "palavra passe", "chave wifi", "código de acesso", "codigo de acesso",
        "wachtwoord", "toegangscode", "wifi sleutel", "netwerksleutel",
        # zh / ja
        "密碼", "密码", "口令", "通關密語", "通关密语", "暗碼", "暗码", "パスワード", "合言葉",
        # a login's name: "login: alice / hunter22" (see LOGIN_WORDS)
        "username", "user name", "user id", "userid", "user", "account", "login name",
        "benutzername", "benutzer", "nom d'utilisateur", "identifiant", "usuario",
        "nombre de usuario", "utente", "nome utente", "utilizador", "usuário",
        "gebruikersnaam", "gebruiker", "帳號", "账号", "賬號", "登入", "登錄", "登录",
        "用戶名", "用户名", "使用者名稱", "ユーザー名", "ログイン",
    ),
    "pin_code": (
        "pin", "pin code", "pin number", "pin 碼", "pin 码", "pin nummer", "pin nr",
        "security pin", "otp", "2fa code", "2fa", "mfa code", "one time code",
        "one time passcode", "one time password", "verification code", "auth code",
        "authentication code", "confirmation code", "sms code",
        "geheimzahl", "geheimnummer", "bestätigungscode", "verifizierungscode",
        "code pin", "code confidentiel", "code de vérification", "code de confirmation",
        "código pin", "codigo pin", "número pin", "numero pin", "código de verificación",
        "codigo de verificacion", "codice pin", "codice di verifica", "código de verificação",
        "codigo de verificacao", "pincode", "verificatiecode",
        "驗證碼", "验证码", "認證碼", "认证码", "動態密碼", "动态密码", "一次性密碼",
        "一次性密码", "提款密碼", "提款密码", "支付密碼", "支付密码", "暗証番号",
        # any code, when a bank or a text message sent it (see CODE_WORDS)
        "code", "codes", "código", "codigo", "codice", "代碼", "代码", "簡訊碼", "短信码",
        "コード",
    ),
    "card_security_code": (
        "cvv", "cvv2", "cvc", "cvc2", "cvn", "csc", "card security code", "security code",
        "kartenprüfnummer", "prüfnummer", "prüfziffer", "sicherheitscode", "cryptogramme",
        "code de sécurité", "código de seguridad", "codigo de seguridad",
        "codice di sicurezza", "código de segurança", "codigo de seguranca",
        "beveiligingscode", "安全碼", "安全码", "背面三碼", "背面三码", "檢查碼", "检查码",
    ),
    "api_key": (
        "api key", "api token", "api secret", "access key", "access token", "secret key",
        "secret access key", "secret", "token", "bearer", "auth key", "auth token",
        "client secret", "refresh token", "session token", "app secret", "private key",
        "license key", "licence key", "product key", "api schlüssel", "clé api", "cle api",
        "clave api", "chiave api", "chave api", "api sleutel",
        "金鑰", "金钥", "密鑰", "密钥", "私鑰", "私钥", "令牌", "權杖", "权杖", "存取碼",
        "トークン",
    ),
    "national_id": (
        "ssn", "social security number", "social security no", "social security",
        "sozialversicherungsnummer", "steuer id", "steueridentifikationsnummer",
        "numéro de sécurité sociale", "numero de securite sociale", "número de seguro social",
        "numero de seguro social", "codice fiscale", "burgerservicenummer", "bsn",
        "passport number", "passport no", "身分證字號", "身分證號碼", "身分證", "身份證",
        "身份证号码", "身份证号", "身份证", "社會安全號碼", "社會安全號", "社会安全号码",
        "護照號碼", "护照号码",
    ),
    "card_number": (
        "card number", "card no.", "card no", "credit card", "debit card", "kartennummer",
        "kreditkartennummer", "numéro de carte", "número de tarjeta", "numero de tarjeta",
        "numero di carta", "número do cartão", "numero do cartao", "kaartnummer",
        "卡號", "卡号", "信用卡號", "信用卡号",
    ),
    "bank_account": (
        "bank account", "account number", "account no.", "account no", "acct no.", "acct no",
        "iban", "routing number",
        "sort code", "kontonummer", "numéro de compte", "número de cuenta", "numero de cuenta",
        "numero di conto", "número da conta", "numero da conta", "rekeningnummer",
        "銀行帳號", "银行账号", "銀行賬號", "帳戶號碼", "账户号码", "戶頭", "户头",
    ),
}  # fmt: skip

# Words that name a secret only sometimes ("wifi: hunter22", but "the wifi is down",
# "bank 2024 statement"): their value must follow a separator and hold a digit. As
# :func:`memory.base.secret_phrases` keys them: lower case, no spaces.
WEAK_KEYWORDS = frozenset(
    {"pass", "wifi", "wlan", "login", "signin", "bank", "router", "combination", "combo"}
)

# Words that name a login: the value after them is a user name, never a secret, but the one
# after a slash is its password ("login: alice / hunter22", "帳號 bob/hunter22"). As
# :func:`memory.base.secret_phrases` keys them: lower case, no spaces.
LOGIN_WORDS = frozenset(
    {"login", "signin", "username", "userid", "loginname", "benutzername", "nomd'utilisateur"}
    | {"identifiant", "nombredeusuario", "nomeutente", "utilizador", "gebruikersnaam"}
    | {"帳號", "账号", "賬號", "登入", "登錄", "登录", "用戶名", "用户名", "使用者名稱"}
    | {"ユーザー名", "ログイン"}
)
# Words that name a login only sometimes ("user: alice / hunter22", "account: savings /
# checking"): the word after the slash must look like a password (it holds a digit).
LOGIN_WORDS_WEAK = frozenset({"user", "account", "benutzer", "usuario", "usuário", "utente"})
LOGIN_WORDS_WEAK |= {"gebruiker"}
# Of these, the ones whose own value is no password ("login: hunter22" is one).
NAME_ONLY = (LOGIN_WORDS | LOGIN_WORDS_WEAK) - {"login", "signin"}
# Words that name any code: its digits are a one-time code only when the words around it say
# a bank or a message sent it ("code 483920 from the bank"), not "zip code 10001".
CODE_WORDS = frozenset({"code", "codes", "código", "codigo", "codice", "代碼", "代码", "コード"})
CODE_WORDS |= {"簡訊碼", "短信码"}
# What says a code is a one-time code, within a sentence of it.
ONE_TIME_CONTEXT = _words(
    """
    bank bank's banks banking sms text texted texting message messages messaged sent send
    sends otp one-time onetime verification verify verifying confirmation confirm
    authentication authenticator login log sign signin 2fa mfa two-factor expires expire
    expiring valid share security paypal
    banque banco banca banken sparkasse nachricht gesendet geschickt envoyé reçu enviado
    recibido inviato ricevuto verzonden ontvangen bestätigung vérification verificación
    verifica verificação
    """
)
ONE_TIME_CONTEXT_ZH = (
    "銀行", "银行", "簡訊", "短信", "訊息", "讯息", "驗證", "验证", "登入", "登录", "有效",
    "傳來", "传来", "發來", "发来", "寄來", "收到", "一次性", "認證", "认证",
)  # fmt: skip
# A code these name is no one-time code ("zip code", "error code 4040", "promo code").
NOT_ONE_TIME = _words(
    """
    zip area postal post postcode country error status http response exit return promo
    promotional discount coupon voucher gift referral invite invitation source qr bar dress
    morse penal civil tax product item sku airport iata language colour color course class
    room building house tracking order booking reference flight train seat
    """
)

# What joins a keyword to its value. A symbol (":", "=>", "->", "是") says plainly that a
# value follows; a verb ("is", "was", "ist", "est") does too, a filler word only with one of them.
SEPARATOR_SYMBOLS = ":：=＝<>→⇒➜➔~|–—-#"
SEPARATOR_WORDS_ZH = (
    "是", "為", "为", "係", "改成", "改為", "改为", "換成", "换成", "設成", "設為", "设为",
    "设成", "變成", "变成", "就是", "都是", "還是", "还是", "叫做", "叫", "は", "が",
)  # fmt: skip
SEPARATOR_WORDS = _words(
    "is was are were be been equals equal became becomes reads ist war lautet lautete sind "
    "wäre est était etait sera es era será sea è e' é era sarà é foi será fica luidt wordt "
    "werd"
) | {"c'est", "c’est", "'s", "’s", "is:", "was:"}
FILLER_WORDS = _words(
    "now still currently set changed updated to as will should just simply actually also "
    "jetzt nun neu geändert maintenant désormais toujours ahora ahorita ora adesso agora "
    "nu nog changé cambiada cambiado alterada"
)
# "password for gmail: x", "Passwort für Gmail ist x": a short qualifier before the separator.
QUALIFIERS = _words(
    "for of to at on in from with für von vom zum zur bei pour de du des d' del della dello "
    "di do da dos das no na voor van bij op"
)

# A value that is one of these is talk about a secret, not a secret ("the password is wrong").
NOT_A_VALUE = _words(
    """
    required incorrect wrong invalid expired changed needed not too very the a an my your his
    her our their its this that these those same different stored saved reset empty missing
    forgotten set case-sensitive what whatever unknown strong weak long short secure safe
    easy hard simple complicated complex good bad fine ok okay correct right written on in at
    for of to and or but so still now also being protected encrypted hidden secret private
    shared new old changing expiring yesterday today tomorrow again already always never no
    none null nothing something here there below above following attached sent inside mine
    yours hers theirs ours used important unchanged generated random managed stolen leaked
    compromised blank default only just usually probably maybe really where which who how why
    when if whether like as because since until with without from by about is was are were be
    been will would should could can cannot must has have had do does did it he she they we
    you i me him them us locked lost working broken case digits characters letters numbers
    one two three four five six seven eight nine ten eleven twelve ein eins zwei drei vier fünf
    sechs sieben acht neun zehn deux trois quatre cinq sept huit neuf dix uno dos tres cuatro
    cinco seis siete ocho nueve diez due tre quattro cinque sei sette otto nove dieci dois três
    quatro sete oito dez een twee drie vijf zes zeven negen tien
    falsch richtig zu sehr nicht kein keine leer abgelaufen geändert vergessen sicher unsicher
    stark schwach lang kurz der die das ein eine mein meine dein deine noch schon auch immer
    neu alt gleich geheim was wie wo unbekannt erforderlich nötig ist war
    faux fausse trop très pas le la les un une mon ma mes ton ta vide expiré oublié changé
    requis nécessaire fort faible court sûr quoi quel quelle inconnu encore aussi nouveau
    même est était
    incorrecta incorrecto equivocada demasiado muy el los las mi tu su vacía caducada
    olvidada cambiada necesaria requerida fuerte débil larga corta segura qué que cuál
    desconocida siempre todavía también nueva misma secreta es era
    sbagliata errata troppo molto non il lo gli mia mio tua vuota scaduta dimenticata
    cambiata richiesta debole lunga sicura che cosa quale sconosciuta sempre ancora anche
    nuova stessa segreta è
    errada incorreta demais muito não nao os as um uma minha meu sua vazia expirada esquecida
    alterada necessária obrigatória fraca curta qual desconhecida ainda nova mesma
    fout verkeerd onjuist te erg niet geen het een mijn jouw leeg verlopen vergeten gewijzigd
    veranderd nodig vereist sterk zwak kort veilig wat welke onbekend altijd nog ook nieuw
    zelfde
    """
)
# A Chinese value that starts with one of these is a question or talk ("密碼是多少", "密碼是錯的").
NOT_A_VALUE_ZH = (
    "什麼", "甚麼", "什么", "多少", "啥", "幾", "几", "哪", "錯", "错", "不", "很", "太", "忘",
    "對", "对", "正確", "正确", "一樣", "一样", "同", "空", "被", "已", "在", "的", "要", "會",
    "会", "可以", "甚", "怎",
)  # fmt: skip

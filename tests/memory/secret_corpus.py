"""The phrasing corpus of the secret guard: how people say a secret, written down by hand.

Keywords x separators x values, in Chinese, English, German, French, Spanish, Italian,
Portuguese and Dutch; the tests draw from it with hypothesis, ``bench/secret_phrasings.py``
walks all of it. The lists are written here independently of the guard's own lexicon, so a
phrasing the guard does not know shows up as a miss.
"""

from __future__ import annotations

# Who owns the secret, before its keyword.
OWNERS = ("", "my ", "the ", "our ", "My ", "The new ", "mein ", "mon ", "mi ", "la mia ")
OWNERS_ZH = ("", "我的", "我們家", "公司的")

PASSWORD_WORDS = (
    "password", "Password", "PASSWORD", "passwd", "passcode", "passphrase", "pwd", "pw",
    "wifi password", "Wi-Fi password", "wifi key", "WiFi key", "network key", "bank password",
    "email password", "login password", "router password", "admin password", "door code",
    "alarm code", "gate code", "recovery code", "master password", "db_password",
    "Passwort", "Kennwort", "WLAN-Passwort", "WLAN-Schlüssel", "Zugangscode",
    "mot de passe", "Mot de passe", "mdp", "clé wifi", "code d'accès",
    "contraseña", "Contraseña", "clave", "clave wifi", "código de acceso",
    "password", "parola d'ordine", "chiave wifi", "codice di accesso",
    "senha", "palavra-passe", "chave wifi", "código de acesso",
    "wachtwoord", "Wachtwoord", "wifi-sleutel", "toegangscode",
    "wifi", "WiFi", "bank login", "login", "pass", "pswd",
    "safe combination", "locker combination", "combination", "security answer",
    "secret answer", "memorable word",
)  # fmt: skip
PASSWORD_WORDS_ZH = (
    "密碼",
    "密码",
    "wifi密碼",
    "WiFi 密碼",
    "網路密碼",
    "銀行密碼",
    "口令",
    "登入密碼",
)
PIN_WORDS = (
    "PIN", "pin", "Pin", "PIN code", "pin number", "bank PIN", "card PIN", "PIN-Code",
    "Geheimzahl", "code PIN", "code confidentiel", "código PIN", "PIN", "codice PIN",
    "pincode", "verification code", "one-time code", "OTP", "2FA code", "PIN #",
    "Bestätigungscode", "code de vérification", "código de verificación",
)  # fmt: skip
PIN_WORDS_ZH = ("PIN碼", "PIN 碼", "驗證碼", "验证码", "提款密碼", "支付密码", "認證碼")
CVV_WORDS = (
    "CVV",
    "cvv",
    "CVC",
    "cvv2",
    "security code",
    "card security code",
    "Prüfnummer",
    "cryptogramme",
    "código de seguridad",
    "codice di sicurezza",
    "安全碼",
    "背面三碼",
)
KEY_WORDS = (
    "API key",
    "api_key",
    "apiKey",
    "API token",
    "access token",
    "secret key",
    "client secret",
    "token",
    "bearer",
    "auth token",
    "secret",
    "clé API",
    "金鑰",
    "密鑰",
)

SEPARATORS = (
    " is ", " was ", ": ", ":", " : ", " = ", "=", " => ", " -> ", " → ", " is: ", " was: ",
    " is now ", " is set to ", " equals ", " - ", " := ", "：", " ： ", "\u3000:\u3000",
    " ist ", " lautet ", " ist: ", " est ", " c'est ", " : ", " es ", " era ", " è ", " é ",
    " is ", " was ", " are ", " became ",
)  # fmt: skip
POSSESSIVES = ("'s ", "’s ")
SEPARATORS_ZH = ("是", "是：", "：", ":", " 是 ", "為", "为", "改成", "就是", "=", " : ", "是 ")
# A PIN or code may follow its keyword with no separator at all ("PIN 1234").
BARE = (" ", "  ", "\u3000")
QUOTES = (("", ""), ('"', '"'), ("'", "'"), ("“", "”"), ("「", "」"), ("`", "`"))
AFTER = ("", ".", ",", "!", " thanks", " ok?", "，謝謝", "。", " (don't tell)", "\n")

# The value said first.
REVERSED = (
    "{v} is my password", "{v} is the wifi password", "{v} was my old PIN", "{v} = password",
    "{v} ist mein Passwort", "{v} est mon mot de passe", "{v} es mi contraseña",
    "{v} è la mia password", "{v} é a minha senha", "{v} is mijn wachtwoord", "{v}是我的密碼",
    "{v} 是 wifi 密碼",
)  # fmt: skip

# Sentences about secrets that hold none: nothing may be masked.
ORDINARY = (
    "I need to reset my password tomorrow",
    "The password is too short, the site says",
    "my password is wrong again",
    "Passwords should be long and unique",
    "the PIN pad at the shop was broken",
    "I changed my PIN last week",
    "my PIN is the same as before",
    "the wifi password is on the fridge",
    "the secret is out now",
    "my secret is that I love cake",
    "our token bucket algorithm limits requests",
    "Das Passwort ist falsch",
    "mein Passwort ist zu kurz",
    "le mot de passe est trop court",
    "mon mot de passe est oublié",
    "la contraseña es incorrecta",
    "la clave del éxito es la paciencia",
    "la password è sbagliata",
    "a senha está errada",
    "het wachtwoord is fout",
    "密碼錯誤三次會被鎖住",
    "密碼是多少？",
    "我的密碼是什麼來著",
    "密碼要每三個月更換一次",
    "驗證碼一直收不到",
    "the meeting is at 10:30 on 2026-11-22",
    "call me at +886 912 345 678",
    "we met on 2026.11.22 10.30 at the cafe",
    "order 20240101123456 shipped yesterday",
    "I paid 1234 dollars for 2 tickets",
    "room 1234, floor 5, building 7",
    "the ping to the server is 20 ms",
    "she is a secretary at the bank",
    "I bought 4 pins and 12 needles",
    "the password manager is great",
    "my card number ends in 1234",
    "a spinning wheel of 1234 colours",
    "the wifi is down again",
    "the bank is closed on Sunday",
    "my bank is HSBC",
    "the login 2024 report is ready",
    "I will pass the exam",
    "the combination of flavours is great",
    "the combination of 3 colours works",
    "combo meal 2 is good",
    "We bought a safe combination lock",
    "my boarding pass is in my bag",
    "the router is 192.168.1.1",
    "wifi: 2.4GHz and 5GHz",
    "passport photos cost 300 NT",
    "The password is case sensitive",
    "The PIN is four digits",
    "the PIN is printed on the letter",
    "the password is printed on the router",
    "the password is easily guessed",
    "Your password is expiring soon",
)

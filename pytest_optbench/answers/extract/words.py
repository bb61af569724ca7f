"""Word tables for answer extraction in the ten bundled languages (en, ko, zh, es, ar, ru, ja,
de, fr, hi).

Pure data. Words are lower-case tokens as the lexer produces them (a run of letters, with
inner apostrophes: "i'd", "n'est"); a phrase is a tuple of such tokens. Scripts written
without spaces (Chinese, Japanese) come out of the lexer as one token per run, so their
entries are *substrings* (the ``CJK_*`` tables), looked for inside such runs.
"""

from __future__ import annotations

Phrase = tuple[str, ...]


def phrases(*items: str) -> frozenset[Phrase]:
    """"per cent" -> ("per", "cent"); a hyphen inside an item is a token of its own."""
    out = set()
    for item in items:
        out.add(tuple(item.replace("-", " - ").split()))
    return frozenset(out)


# --------------------------------------------------------------------------- percent

# After a number: "65 percent", "65 Prozent", "65 퍼센트", "65 في المائة".
PERCENT_AFTER = phrases(
    "percent", "per cent", "pct", "percentage", "prozent", "pour cent", "pourcent", "por ciento",
    "porciento", "процент", "процента", "процентов", "проц", "퍼센트", "프로", "प्रतिशत",
    "फ़ीसदी", "फीसदी", "फ़ीसद", "في المائة", "في المئة", "بالمائة", "بالمئة", "بالمية", "في المية",
)
# Percent words glued to what follows in unspaced scripts ("65퍼센트입니다", "45パーセント").
CJK_PERCENT_PREFIXES = ("パーセント", "％", "퍼센트", "프로")
# Before a number: Chinese 百分之六十五.
CJK_PERCENT_BEFORE = "百分之"
# "七成" (zh) and "三割" (ja) are tenths.
CJK_TENTHS = ("成", "割")

# --------------------------------------------------------------------------- numbers in words

UNITS_EN = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
            "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
            "nineteen": 19}
TENS_EN = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
           "eighty": 80, "ninety": 90}
HUNDRED = {"hundred", "hundert", "cent", "cien", "ciento", "сто", "सौ", "مائة", "مئة", "مية"}

UNITS_DE = {"null": 0, "eins": 1, "ein": 1, "eine": 1, "zwei": 2, "drei": 3, "vier": 4, "fünf": 5,
            "sechs": 6, "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12,
            "dreizehn": 13, "vierzehn": 14, "fünfzehn": 15, "sechzehn": 16, "siebzehn": 17,
            "achtzehn": 18, "neunzehn": 19}
TENS_DE = {"zwanzig": 20, "dreißig": 30, "dreissig": 30, "vierzig": 40, "fünfzig": 50,
           "sechzig": 60, "siebzig": 70, "achtzig": 80, "neunzig": 90}

UNITS_FR = {"zéro": 0, "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6,
            "sept": 7, "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12, "treize": 13,
            "quatorze": 14, "quinze": 15, "seize": 16}
TENS_FR = {"vingt": 20, "vingts": 20, "trente": 30, "quarante": 40, "cinquante": 50,
           "soixante": 60}

UNITS_ES = {"cero": 0, "uno": 1, "una": 1, "un": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5,
            "seis": 6, "siete": 7, "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12,
            "trece": 13, "catorce": 14, "quince": 15, "dieciséis": 16, "diecisiete": 17,
            "dieciocho": 18, "diecinueve": 19, "veinte": 20, "veintiuno": 21, "veintidós": 22,
            "veintitrés": 23, "veinticuatro": 24, "veinticinco": 25, "veintiséis": 26,
            "veintisiete": 27, "veintiocho": 28, "veintinueve": 29}
TENS_ES = {"treinta": 30, "cuarenta": 40, "cincuenta": 50, "sesenta": 60, "setenta": 70,
           "ochenta": 80, "noventa": 90}

UNITS_RU = {"ноль": 0, "один": 1, "одна": 1, "одного": 1, "два": 2, "две": 2, "двух": 2,
            "три": 3, "трёх": 3, "трех": 3, "четыре": 4, "четырёх": 4, "пять": 5, "пяти": 5,
            "шесть": 6, "шести": 6, "семь": 7, "семи": 7, "восемь": 8, "восьми": 8, "девять": 9,
            "девяти": 9, "десять": 10, "десяти": 10,
            "одиннадцать": 11, "двенадцать": 12, "тринадцать": 13, "четырнадцать": 14,
            "пятнадцать": 15, "шестнадцать": 16, "семнадцать": 17, "восемнадцать": 18,
            "девятнадцать": 19}
TENS_RU = {"двадцать": 20, "двадцати": 20, "тридцать": 30, "тридцати": 30, "сорок": 40,
           "сорока": 40, "пятьдесят": 50, "пятидесяти": 50, "шестьдесят": 60, "шестидесяти": 60,
           "семьдесят": 70, "семидесяти": 70, "восемьдесят": 80, "восьмидесяти": 80,
           "девяносто": 90, "девяноста": 90}

# Hindi number words are irregular; the round and half-round values people write.
WORDS_HI = {"शून्य": 0, "एक": 1, "दो": 2, "तीन": 3, "चार": 4, "पाँच": 5, "पांच": 5, "छह": 6,
            "सात": 7, "आठ": 8, "नौ": 9, "दस": 10, "पंद्रह": 15, "बीस": 20, "पच्चीस": 25,
            "तीस": 30, "पैंतीस": 35, "चालीस": 40, "पैंतालीस": 45, "पचास": 50, "पचपन": 55,
            "साठ": 60, "पैंसठ": 65, "सत्तर": 70, "पचहत्तर": 75, "अस्सी": 80, "पचासी": 85,
            "नब्बे": 90, "पंचानबे": 95, "सौ": 100}
UNITS_AR = {"صفر": 0, "واحد": 1, "واحدة": 1, "اثنان": 2, "اثنين": 2, "ثلاثة": 3, "ثلاث": 3,
            "أربعة": 4, "أربع": 4, "خمسة": 5, "خمس": 5, "ستة": 6, "ست": 6, "سبعة": 7, "سبع": 7,
            "ثمانية": 8, "ثماني": 8, "تسعة": 9, "تسع": 9, "عشرة": 10, "عشر": 10}
TENS_AR = {"عشرون": 20, "عشرين": 20, "ثلاثون": 30, "ثلاثين": 30, "أربعون": 40, "أربعين": 40,
           "خمسون": 50, "خمسين": 50, "ستون": 60, "ستين": 60, "سبعون": 70, "سبعين": 70,
           "ثمانون": 80, "ثمانين": 80, "تسعون": 90, "تسعين": 90}

# Chinese/Japanese numerals; Sino-Korean digits.
CJK_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}
HANGUL_DIGITS = {"영": 0, "일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8,
                 "구": 9}

# Shares in words ("about half", "a third", "two thirds"); the value is on 0-100.
FRACTION_WORDS = {
    "half": 50.0, "halves": 50.0, "third": 100 / 3, "thirds": 100 / 3, "quarter": 25.0,
    "quarters": 25.0, "fifth": 20.0, "fifths": 20.0, "tenth": 10.0, "tenths": 10.0,
    "hälfte": 50.0, "drittel": 100 / 3, "viertel": 25.0, "fünftel": 20.0, "zehntel": 10.0,
    "moitié": 50.0, "tiers": 100 / 3, "quart": 25.0, "cinquième": 20.0, "dixième": 10.0,
    "mitad": 50.0, "tercio": 100 / 3, "quinto": 20.0, "décimo": 10.0,
    "половина": 50.0, "половину": 50.0, "треть": 100 / 3, "трети": 100 / 3, "четверть": 25.0,
    "一半": 50.0, "半分": 50.0, "절반": 50.0, "आधा": 50.0, "आधी": 50.0, "तिहाई": 100 / 3,
    "चौथाई": 25.0, "النصف": 50.0, "نصف": 50.0, "الثلث": 100 / 3, "ثلث": 100 / 3, "الربع": 25.0,
    "ربع": 25.0,
}
# "two thirds", "three quarters", "zwei Drittel", "deux tiers", "две трети".
FRACTION_COUNTS = {"one": 1, "a": 1, "two": 2, "three": 3, "four": 4, "ein": 1, "eine": 1,
                   "zwei": 2, "drei": 3, "un": 1, "une": 1, "deux": 2, "trois": 3, "una": 1,
                   "dos": 2, "tres": 3, "एक": 1, "दो": 2, "तीन": 3, "две": 2, "три": 3}

# "fifty-fifty" and friends: an even chance.
EVEN_CHANCE = phrases("fifty - fifty", "fifty fifty", "50 - 50", "moitié - moitié", "halbe - halbe",
                      "cincuenta - cincuenta", "пятьдесят на пятьдесят", "五五开", "五分五分", "반반", "반반입니다",
                      "पचास - पचास", "fifty - fifty chance", "toss - up", "coin flip", "coin - flip",
                      "even odds", "even chance", "cinquante - cinquante", "pile ou face", "münzwurf",
                      "cara o cruz", "орёл или решка", "орел или решка", "fifty fifty chance")

# --------------------------------------------------------------------------- fractions and odds

# "<n> in <d>", "<n> out of <d>": the words between numerator and denominator.
ODDS_BETWEEN = phrases(
    "in", "out of", "of every", "in every", "chance in", "chances in", "sur", "chance sur",
    "chances sur", "von", "aus", "de cada", "entre", "de", "из", "на", "में से", "من", "من كل",
    "шанс из", "шанса из", "шансов из", "chance auf", "chance von", "posibilidad entre",
    "probabilidad entre", "sobre", "en",
)
# "<d> में से <n>" (hi) and "<d>分の<n>"/"<d>분의 <n>" (ja/ko) put the total first.
ODDS_TOTAL_FIRST = phrases("में से")
CJK_FRACTION_MARKERS = ("分之", "分の", "분의")  # 三分之一 = 1/3, 3分の1 = 1/3, 3분의 1 = 1/3

# --------------------------------------------------------------------------- heads and markers

# Words that make a sentence about "the probability": a number after them is a probability.
PROBABILITY_HEADS = frozenset({
    "probability", "probabilities", "chance", "chances", "chancen", "likelihood", "odds", "probabilité",
    "probabilités", "wahrscheinlichkeit", "probabilidad", "posibilidad",
    "posibilidades", "probabilidades", "вероятность", "вероятности", "вероятностью", "шанс",
    "шансы", "шансов", "확률", "확률은", "확률이", "확률을", "확률:", "가능성", "가능성은",
    "가능성이", "संभावना", "सम्भावना", "प्रायिकता", "احتمال", "الاحتمال", "احتمالية",
    "الاحتمالية", "احتمالات", "فرصة", "فرص",
})
CJK_PROBABILITY_HEADS = ("概率", "几率", "機率", "机率", "可能性", "確率", "可能性", "확률", "가능성")
# Words that present "the answer" (a number after them is the reply's answer, on the
# requested scale, whatever it measures).
ANSWER_HEADS = frozenset({
    "answer", "estimate", "estimation", "guess", "rating", "score", "recommendation", "strength",
    "significance", "verdict", "forecast", "prediction", "response", "réponse", "note", "évaluation", "antwort", "schätzung", "einschätzung", "bewertung", "prognose",
    "respuesta", "estimación", "calificación", "valoración", "puntuación", "pronóstico",
    "ответ", "оценка", "прогноз", "답", "답변", "대답", "정답", "추정", "추정치", "추정치는",
    "평가", "점수", "예측", "उत्तर", "जवाब", "अनुमान", "रेटिंग", "إجابة", "الإجابة", "الجواب",
    "جواب", "تقدير", "التقدير", "تقديري", "تقييم", "التقييم",
})
# Of those, the ones that present the answer in running prose too ("my guess is 35%"); the
# others ("score", "rating", "strength") only as labels or after "my" ("the score is 85" is a fact).
PROSE_ANSWER_HEADS = frozenset({
    "answer", "estimate", "estimation", "guess", "forecast", "prediction", "verdict", "antwort",
    "schätzung", "einschätzung", "prognose", "réponse", "respuesta", "estimación", "pronóstico",
    "ответ", "оценка", "прогноз", "답", "답변", "대답", "정답", "추정", "추정치", "추정치는", "예측",
    "उत्तर", "जवाब", "अनुमान", "إجابة", "الإجابة", "الجواب", "جواب", "تقدير", "التقدير", "تقديري",
})
CJK_ANSWER_HEADS = ("答案", "回答", "答え", "估计", "估計", "推定", "見積", "评分", "評価", "预测",
                    "予測", "답변", "대답", "정답", "추정", "평가")
# Labels that conclude ("Overall: 35%", "Bottom line: 40%").
CONCLUSION_LABELS = frozenset({"overall", "conclusion", "bottom", "verdict", "summary", "tl;dr", "tldr", "final",
                               "fazit", "ergebnis", "итог", "итого", "вывод", "conclusión", "résumé",
                               "निष्कर्ष", "الخلاصة", "النتيجة", "결론", "요약"})
CJK_CONCLUSION = ("结论", "总结", "結論", "まとめ", "결론")
# Label words that mark *the final* answer.
FINAL_WORDS = frozenset({"final", "finale", "endgültige", "endgültig", "finalmente",
                         "итоговый", "окончательный", "최종", "अंतिम", "النهائية", "النهائي"})
CJK_FINAL = ("最终", "最終", "最后", "最後", "최종")
# A label that is itself a likelihood word ("Likely: 85%").
LIKELY_LABELS = frozenset({"likely", "unlikely", "probable", "improbable", "certainly", "certain",
                           "definitely", "probably", "possibly", "doubtful", "wahrscheinlich",
                           "unwahrscheinlich", "probablement", "вероятно", "маловероятно", "가능",
                           "संभावित", "محتمل"})

# Copulas and prepositions that join a head (and its event) to the number.
COPULAS = frozenset({
    "is", "are", "was", "were", "be", "being", "been", "'s", "equals", "equal", "at", "of", "as",
    "becomes", "comes", "stands", "lies", "sits", "remains", "would", "will", "should", "to",
    "est", "sont", "serait", "sera", "de", "d'", "à", "ist", "liegt", "läge", "wäre", "beträgt", "stehen", "steht",
    "bei", "auf", "von", "es", "sería", "será", "está", "en", "del", "составляет", "составит",
    "равна", "равно", "будет", "около", "в", "—", "है", "हैं", "होगी", "होगा", "की", "का", "के",
    "هو", "هي", "تبلغ", "يبلغ", "حوالي", "يقارب", "تقارب", "بنسبة", "نسبة", "إلى",
    "은", "는", "이", "가", "입니다", "이다",
})
# Openers of an event description after a head: "the probability [that|of] <event> is".
EVENT_OPENERS = frozenset({"that", "of", "for", "dass", "daß", "que", "qu'", "de", "du", "des",
                           "того", "что", "чтобы", "कि", "أن", "ان", "بأن", "لأن"})

# First-person lead-ins: "I'd say 70%", "Je dirais 70 %", "Ich schätze 70 %".
LEADIN_VERBS = frozenset({
    "say", "estimate", "guess", "put", "go", "rate", "give", "pick", "settle", "assign", "place",
    "reckon", "think", "believe", "answer", "peg", "choose", "stick", "land", "call", "thought",
    "said", "estimated", "guessed", "figured", "figure", "expect", "would've",
    "dirais", "dis", "estime", "estimerais", "pense", "mettrais", "situerais", "évalue", "table",
    "sage", "würde", "schätze", "schätzen", "tippe", "denke", "glaube", "veranschlage",
    "diría", "digo", "estimo", "estimaría", "calculo", "creo", "pienso", "pondría", "diria",
    "сказал", "сказала", "скажу", "оцениваю", "оценил", "оценила", "оценю", "думаю", "считаю",
    "полагаю", "ставлю", "कहूँगा", "कहूंगा", "कहूँगी", "मानता", "मानती", "लगता", "अनुमान",
    "أعتقد", "أظن", "أقدر", "أقدّر", "أرى", "أقول",
})
FIRST_PERSON = frozenset({
    "i", "i'd", "i'll", "i'm", "id", "ill", "we", "we'd", "we'll", "my", "our", "me", "je", "j'",
    "ich", "wir", "yo", "я", "мы", "мой", "моя", "моё", "मैं", "मुझे", "मेरा", "मेरी", "أنا",
    "let's", "let", "would", "mein", "meine", "meiner", "unsere", "ma", "mon", "mes", "notre", "mi",
    "mis", "nuestra", "nuestro", "제", "저의", "나의", "내", "저는", "나는", "我", "我的", "私の",
    "私は", "僕", "تقديري", "رأيي",
})
# Words allowed around a number in a phrase that is nothing but the answer: hedges, lead-ins,
# connectors ("Or 80%.", "Je dirais environ 70 %", "most likely around 65").
HEDGES = frozenset({
    "about", "around", "approximately", "approx", "roughly", "circa", "ca", "some", "somewhere",
    "maybe", "perhaps", "probably", "likely", "nearly", "almost", "close", "just", "only",
    "probability", "chance", "likelihood", "estimated", "est", "near", "an", "a", "the",
    "etwa", "ungefähr", "rund", "knapp", "gut", "vielleicht", "wahrscheinlich", "eher",
    "ca.", "zirka", "environ", "à", "peu", "près", "autour", "peut-être", "probablement",
    "quelque", "plutôt", "alrededor", "aproximadamente", "cerca", "unos", "unas", "más", "menos",
    "quizás", "quizá", "probablemente", "un", "el", "la", "del", "около", "примерно",
    "приблизительно", "порядка", "где-то", "почти", "возможно", "вероятно", "скорее", "всего",
    "약", "대략", "거의", "아마", "लगभग", "करीब", "क़रीब", "तकरीबन", "शायद", "قرابة", "حوالي",
    "حوالى", "نحو", "تقريبا", "تقريبًا", "ربما", "يقارب", "ما", "~", "≈", "بنحو", "بحوالي",
    "بنسبة", "بما", "de", "d'", "like", "approx.",
    # "It's basically a coin flip", "honestly 30%", "En gros 40 %", "Im Grunde 50 %"
    "basically", "essentially", "honestly", "frankly", "realistically", "practically", "pretty", "much", "gesagt",
    "really", "basiquement", "essentiellement", "franchement", "pratiquement", "grundsätzlich",
    "praktisch", "ehrlich", "básicamente", "esencialmente", "prácticamente", "francamente",
    "практически", "фактически", "честно",
})
CJK_HEDGES = ("大约", "大概", "约", "約", "左右", "差不多", "接近", "およそ", "程度", "くらい",
              "ぐらい", "前後", "ほど", "だいたい", "大体", "정도", "가량", "쯤", "대략", "거의")
CONNECTORS = frozenset({
    "or", "and", "so", "thus", "hence", "therefore", "i.e.", "ie", "i", "e", "say", "call", "it",
    "that's", "it's", "is", "would", "be", "'d", "with", "but", "then", "overall", "final",
    "answer", "estimate", "most", "more", "like", "yes", "no", "donc", "also", "ainsi", "alors",
    "ou", "et", "mais", "je", "dirais", "oder", "und", "aber", "daher", "ich", "würde",
    "sagen", "schätze", "o", "y", "pero", "así", "que", "por", "tanto", "lo", "diría", "или",
    "и", "но", "итак", "так", "что", "я", "бы", "сказал", "сказала", "значит", "그래서", "또는",
    "따라서", "즉", "या", "और", "लेकिन", "तो", "इसलिए", "أو", "و", "لكن", "إذن", "لذلك", "أعتقد",
    "أن", "my", "our", "guess", "best", "go", "i'd", "i'll", "i'm", "we'd", "put", "at",
    "estimating", "assign", "rate", "give", "settle", "on", "pick", "this", "to", "gut",
    "feeling", "instinct", "sense", "is:", "are", "was", "than",
})
# Connectors that make a following number a conclusion ("50-60%, so 55").
CONCLUSION = frozenset({"so", "thus", "hence", "therefore", "i.e.", "ie", "donc", "ainsi", "also",
                        "leaning", "closer", "toward", "towards", "call", "settle",
                        "daher", "deshalb", "somit", "así", "entonces", "итак", "значит",
                        "따라서", "그래서", "即", "इसलिए", "إذن", "لذلك"})

# --------------------------------------------------------------------------- bounds, ranges

# Before a number: "less than 5%" (upper), "over 80%" (lower); the bound is the value.
BOUNDS_BEFORE = phrases(
    "less than", "fewer than", "under", "below", "at most", "no more than", "up to", "not more than",
    "more than", "over", "above", "greater than", "at least", "no less than", "not less than",
    "as high as", "as low as", "as much as", "upwards of", "north of", "south of",
    "weniger als", "unter", "höchstens", "bis zu", "mehr als", "über", "mindestens",
    "moins de", "au plus", "au maximum", "jusqu'à", "plus de", "au moins", "au minimum",
    "menos de", "menos del", "como máximo", "hasta", "más de", "más del", "al menos",
    "por lo menos", "como mínimo", "por debajo del", "por encima del",
    "менее", "меньше", "не более", "до", "более", "больше", "свыше", "не менее", "как минимум",
    "최대", "최소", "적어도", "कम से कम", "अधिकतम", "أقل من", "أكثر من", "على الأقل", "ما لا يقل عن",
    "<", ">", "≤", "≥", "<=", ">=",
)
BOUNDS_AFTER = phrases("or less", "or more", "or lower", "or higher", "at most", "at least",
                       "से कम", "से अधिक", "से ज़्यादा", "से ज्यादा", "या कम", "या अधिक")
CJK_BOUNDS = ("不到", "低于", "少于", "高于", "超过", "至少", "最多", "以上", "以下", "不足", "未満",
              "少なくとも", "最大", "미만", "이상", "이하", "초과", "최소", "최대")
# Between the two ends of a range.
RANGE_JOINERS = phrases("-", "–", "—", "to", "~", "〜", "～", "bis", "à", "a", "al", "до", "到",
                        "至", "から", "에서", "से", "إلى")
RANGE_OPENERS = phrases("between", "zwischen", "entre", "entre el", "entre un", "между", "от", "from",
                        "de", "del", "de un", "بين", "介于", "在", "somewhere between", "anywhere from")
RANGE_AND = phrases("and", "und", "et", "y", "y el", "y un", "и", "و", "to", "à", "a", "al", "bis", "до")

# --------------------------------------------------------------------------- other roles

# After a percentage: the share of something, a change or a rate, not a probability.
PROPORTION_AFTER = frozenset({
    "of", "der", "aller", "des", "de", "del", "los", "las", "из", "का", "की", "من",
    "more", "less", "fewer", "higher", "lower", "larger", "smaller", "bigger", "faster",
    "slower", "increase", "decrease", "increases", "decreases", "rise", "drop", "growth",
    "decline", "discount", "off", "interest", "tax", "margin", "share", "rate", "base",
    "mehr", "weniger", "höher", "niedriger", "plus", "moins", "más", "menos", "больше", "меньше",
    "rabatt", "descuento", "remise", "скидка", "annual", "annually", "per", "a", "an", "year",
    "over", "under", "above", "below", "farther", "further", "longer", "shorter", "heavier",
    "lighter", "cheaper", "older", "younger", "greater", "hotter", "colder", "richer", "poorer",
    "better", "worse", "stronger", "weaker", "wider", "taller", "deeper", "closer", "slimmer",
})
PROPORTION_AFTER_CJK = ("的", "の", "의", "더", "より", "多", "少", "增", "减", "이상의")
# A word right before a number that makes it a change or a share.
CHANGE_BEFORE = frozenset({"by", "um", "de", "на", "increase", "increased", "rise", "rose",
                           "grew", "grow", "fell", "drop", "dropped", "declined", "cut", "raise",
                           "raised", "save", "saves", "discount"})

# Plain numbers may be followed by these words and still be an answer ("is 65 because ...").
FOLLOWERS_OK = frozenset({
    "and", "but", "because", "since", "as", "given", "so", "which", "with", "for", "though",
    "although", "or", "based", "considering", "assuming", "if", "on", "in", "out", "chance",
    "chances", "probability", "likelihood", "odds", "percent", "pct", "that", "this", "then",
    "overall", "points", "point", "pp", "at", "is", "to", "from", "the", "it", "i", "i'd",
    "i'm", "i'll", "here", "there", "now", "while", "whereas", "yet", "tops", "max",
    "maximum", "minimum", "min", "either", "neither", "nor", "not", "no", "yes",
    "than", "when", "where", "due", "after", "before", "by", "rather", "too", "also",
    "car", "parce", "puisque", "et", "mais", "ou", "donc", "avec", "pour", "sur", "weil", "da",
    "und", "aber", "oder", "denn", "mit", "für", "porque", "ya", "y", "pero", "o", "con", "para",
    "sobre", "потому", "так", "и", "но", "или", "с", "для", "из", "है", "हैं", "क्योंकि", "और",
    "लेकिन", "या", "के", "लिए", "لأن", "و", "لكن", "أو", "مع", "بسبب",
    "입니다", "이다", "이며", "정도", "쯤", "가량", "정도입니다", "정도로",
})
CJK_FOLLOWERS_OK = ("です", "だ", "と", "で", "ぐらい", "くらい", "程度", "前後", "ほど", "左右",
                    "입니다", "이다", "이며", "정도", "쯤", "가량", "吧", "。", "です。", "点", "分")
# Words before a number that make it a label of something else (numbering, money, ...).
NUMBERING_BEFORE = frozenset({"option", "step", "case", "scenario", "question", "item", "part",
                              "point", "no", "number", "#", "chapter", "section", "page", "rule",
                              "stage", "phase", "level", "grade", "class", "room", "route",
                              "version", "round", "week", "day", "month", "year", "q", "test",
                              "type", "team", "group", "table", "figure", "fig", "line",
                              "schritt", "étape", "paso", "шаг", "вариант", "단계",
                              "चरण", "الخطوة", "age", "aged", "model"})
CURRENCY = frozenset({"$", "€", "£", "¥", "₹", "₩", "₽", "usd", "eur", "gbp", "dollars", "dollar",
                      "euros", "euro", "pounds", "rupees", "yen", "rubles", "million", "billion",
                      "thousand", "k", "m", "bn"})
# "... if X, otherwise Y": a conditional answer.
OTHERWISE = frozenset({"otherwise", "else", "sonst", "ansonsten", "sinon", "sino", "иначе", "否则",
                       "そうでなければ", "그렇지", "वरना", "وإلا"})
# A word that opens a hypothetical: numbers in its sentence are for a variant, not the answer.
HYPOTHETICAL = frozenset({"if", "suppose", "supposing", "assuming", "assume", "imagine", "were",
                          "wenn", "si", "supposons", "supongamos",
                          "если", "предположим", "допустим", "만약", "만일", "अगर", "यदि",
                          "إذا", "لو", "افترض"})
CJK_HYPOTHETICAL = ("如果", "假如", "假设", "もし", "仮に", "만약")
# "If I had to guess, 30%" is an answer, not a hypothetical.
HYPOTHETICAL_EXCEPTIONS = phrases("if i had to", "if i must", "if forced", "if pressed",
                                  "if i have to", "if you want a number", "if i had to guess",
                                  "si je devais", "wenn ich schätzen müsste", "si tuviera que",
                                  "если бы мне пришлось")
INTERROGATIVES = frozenset({
    "what", "which", "how", "who", "why", "when", "where", "is", "are", "does", "do", "did",
    "was", "were", "can", "could", "will", "would", "should", "has", "have", "quelle", "quel",
    "quelles", "est-ce", "wie", "ist", "welche", "cuál", "cuáles", "qué", "какова",
    "каков", "что", "ли", "무엇", "क्या", "ما", "هل", "كم",
})
# Words that retract an earlier answer ("Actually, on reflection, 55%").
REVISION = phrases(
    "actually", "on reflection", "on second thought", "on second thoughts", "correction",
    "correcting", "let me revise", "revise", "revised", "revising", "scratch that", "wait",
    "i'll go with", "i will go with", "i'd rather say", "rather", "instead", "update", "updated",
    "on further thought", "thinking again", "reconsidering", "let me correct",
    "en fait", "tout compte fait", "réflexion faite", "je corrige", "correction", "plutôt",
    "eigentlich", "korrektur", "ich korrigiere", "nein", "eher", "bei näherer betrachtung",
    "en realidad", "corrijo", "corrección", "pensándolo mejor", "mejor dicho",
    "на самом деле", "поправка", "исправлюсь", "хотя нет", "точнее", "подумав",
    "सुधार", "दरअसल", "वास्तव में", "في الواقع", "تصحيح", "بل",
    "정정", "수정", "사실은", "아니", "다시",
)
CJK_REVISION = ("实际上", "更正", "修正", "訂正", "いや", "やはり", "やっぱり", "不对", "应该是",
                "정정", "수정")
# Words that mark a reply that cannot decide between its numbers.
UNDECIDED = phrases("either", "depending", "depends", "cannot decide", "can't decide",
                    "not sure whether", "best case", "worst case", "could be", "might be",
                    "entweder", "soit", "o bien", "либо", "或者", "要么", "또는")

YES_NO = frozenset({
    "yes", "no", "yeah", "yep", "nope", "nah", "definitely", "true", "false", "ja", "nein", "oui",
    "non", "sí", "si", "да", "нет", "네", "예", "아니요", "아니오", "아니", "हाँ", "हां", "नहीं",
    "جي", "نعم", "لا", "كلا",
})
CJK_YES_NO = ("是的", "不是", "否", "是", "不", "はい", "いいえ", "네", "아니요")
REFUSAL = phrases(
    "i can't", "i cannot", "i can not", "i'm not able", "i am not able", "i'm unable",
    "i am unable", "unable to", "not possible to", "impossible to", "can't be determined",
    "cannot be determined", "can't give", "cannot give", "can't provide", "cannot provide",
    "would be a guess", "would just be a guess", "not enough information", "insufficient information",
    "i won't", "i will not", "i'd rather not", "depends on", "i don't think i can", "no way to",
    "no idea", "i don't know", "i do not know", "not sure", "hard to say", "impossible to say",
    "je ne peux", "impossible de", "ich kann", "nicht möglich", "no puedo", "no es posible",
    "я не могу", "невозможно", "मैं नहीं", "नहीं दे सकता", "لا أستطيع", "لا يمكنني", "لا يمكن",
)
CJK_REFUSAL = ("无法", "不能", "できません", "答えられ", "수 없", "어렵습니다")
NEGATIONS = frozenset({
    "not", "no", "never", "nor", "neither", "fail", "fails", "failed", "failing", "failure",
    "nicht", "kein", "keine", "keinen", "keiner", "nie", "ne", "n'", "pas", "jamais", "nunca", "не", "ни", "нет", "않", "못", "안", "नहीं", "न", "ना", "لا", "لن", "لم", "عدم",
    "ألا", "الا", "غير", "ليس",
})
CJK_NEGATIONS = ("不", "未", "没", "沒", "ない", "ず", "ません", "なかっ", "못", "않", "안 ")
# Words that say "the number is not the answer here" right before it ("is not 0.9").
NOT_BEFORE = frozenset({"not", "nicht", "pas", "no", "не", "नहीं", "ليس", "neither", "nor", "ni"})

# Ordinals and time frames: an event "on the first attempt" is not one "on the second attempt".
CONTRASTS = (
    frozenset({"first", "second", "third", "fourth", "fifth", "last", "next", "final", "1st",
               "2nd", "3rd"}),
    frozenset({"today", "tomorrow", "yesterday", "week", "month", "year", "decade"}),
)
STOPWORDS = frozenset({
    "the", "a", "an", "of", "to", "in", "on", "at", "by", "for", "with", "from", "into", "its",
    "it", "their", "his", "her", "this", "that", "these", "those", "they", "them", "he", "she",
    "is", "are", "be", "being", "been", "was", "were", "will", "would", "does", "do", "did",
    "has", "have", "had", "can", "could", "should", "and", "or", "as", "than", "then", "event",
    "who", "which", "what", "there", "own", "s", "'s", "one", "someone", "any", "some", "also",
    "get", "gets", "getting", "got", "still", "within", "during", "after", "before", "while",
    "le", "la", "les", "l'", "un", "une", "de", "du", "des", "que", "qu'", "est", "soit", "et",
    "der", "die", "das", "den", "dem", "ein", "eine", "einen", "dass", "wird", "ist", "und",
    "el", "los", "las", "una", "del", "se", "sea", "y", "что", "того", "в", "на", "и", "с",
    "की", "का", "के", "है", "कि", "में", "को", "से", "और", "أن", "في", "من", "على", "و",
    "para", "su", "sus", "por", "con", "al", "lo", "en", "es", "ser", "pour", "sa", "son", "ses",
    "par", "avec", "au", "aux", "dans", "être", "für", "zur", "zum", "vom", "von", "mit", "bei",
    "sein", "seine", "ihr", "ihre", "werden", "zu", "im", "am", "auf", "по", "для", "к",
    "от", "за", "из", "его", "её", "их", "будет", "быть", "लिए", "द्वारा", "पर", "था", "थी",
    "होगा", "होगी", "जाएगा", "जाएगी", "किया", "गया", "वह", "यह", "إلى", "عن", "مع", "هذا", "هذه",
    "التي", "الذي",
})

# --------------------------------------------------------------------------- the reader's small tables

# English lead-in verbs that need a first-person subject to present a number ("I'd say 70%";
# "say 70 people" does not). The other languages' entries in LEADIN_VERBS are conjugated.
EN_LEADIN_NEEDS_SUBJECT = frozenset({"say", "estimate", "guess", "put", "go", "rate", "give", "pick", "settle",
                                     "assign", "place", "reckon", "think", "believe", "answer", "peg",
                                     "choose", "stick", "land", "call", "würde", "thought", "said",
                                     "estimated", "guessed", "figured", "figure", "expect", "would've"})
# Words allowed between a lead-in verb and its number ("I'd put it at 92%").
LEADIN_FILLER = frozenset({"it", "this", "that", "at", "to", "with", "on", "be", "is", "the", "a",
                           "an", "'s", "for", "as", "up", "in", "around", "about", "roughly",
                           "somewhere", "here", "it's", "its", "l'", "à", "auf", "bei", "en", "в", "на", "que", "dass", "كـ", "ب", "أن", "की", "को", "लगभग", "कि",
                           "है", "la", "le", "die", "das", "el", "probability", "chance",
                           "odds", "likelihood", "estimate", "go", "rather"})
# Characters allowed between a head inside an unspaced run and the number ("概率约为65%", "確率は約20%").
CJK_COPULA_CHARS = frozenset("约為为是は約がおよそ大概左右在将會会有的") | frozenset("은는이가약")
# Runs of unspaced scripts that are nothing but hedges, copulas or lead-ins around a number.
CJK_FILLER_WORDS = frozenset({
    "だと思います", "と思います", "と思う", "でしょう", "です", "だ", "입니다", "이에요", "예요",
    "정도입니다", "我认为", "我觉得", "我估计", "大概是", "约为", "大约是", "是", "为", "吧", "左右吧",
    "程度です", "くらいです", "ぐらいです", "ほどです", "前後です", "정도로", "쯤입니다",
    "가량입니다", "정도라고", "생각합니다", "라고", "추정합니다", "예상합니다", "です。", "と推定します",
    "と見積もります", "答案是", "我的答案是", "我的估计是", "大约", "约", "概率约为", "概率为", "百分之",
    "で", "には", "では", "内", "以内",
})
# Words that join a head to its number ("the probability ... is roughly X", "liegt bei etwa X").
HEAD_LINK_WORDS = frozenset({",", ":", "=", "which", "—", "-", "it", "would", "expected",
                             "estimated", "set", "put", "therefore", "thus", "so", "then", "only",
                             "also", "roughly", "just", "exactly", "precisely", "likely", "given",
                             "be", "seems", "seem", "appears", "probably", "maybe", "perhaps",
                             "think", "i", "say", "'d", "i'd", "in", "my", "view", "opinion",
                             "honestly", "frankly", "realistically", "overall", "final", "here",
                             "de", "du", "la", "le", "el", "die", "der", "ungefähr", "etwa",
                             "около", "примерно", "है", "लगभग", "हो", "सकती", "सकता"})
# A short sentence with a percentage about one of these is a rate or a fact, not the answer.
NOT_ANSWER_SUBJECTS = frozenset({"rate", "rates", "average", "typically", "usually", "historically",
                                 "generally", "base", "baseline", "prior", "statistics", "survey",
                                 "study", "studies", "data", "nationally", "typical", "normally",
                                 "quote", "quoted", "reported", "report", "reports", "grade", "score",
                                 "scored", "need", "needs", "needed", "required", "threshold",
                                 "minimum", "maximum", "mark", "marks", "cutoff", "tax", "interest",
                                 "discount", "return", "yield", "growth", "margin", "share",
                                 "percentile", "accuracy", "humidity", "battery", "capacity",
                                 "complete", "completed", "done", "progress", "sale", "off",
                                 "increase", "decrease", "rise", "fell", "grew", "dropped"})
# Label words naming the answer itself: such a label is a final answer ("Answer: 25").
ANSWER_WORDS = frozenset({"answer", "réponse", "antwort", "respuesta", "ответ", "답", "답변", "정답", "उत्तर",
                          "الإجابة", "الجواب", "إجابة", "جواب"})
# After a percentage, words that make it a probability of what follows ("70% likely that ...",
# "90% confident the answer is yes").
CHANCE_WORDS = frozenset({"likely", "likelihood", "probable", "wahrscheinlich", "confident", "sure",
                          "certain", "sicher", "sûr", "sûre", "seguro", "segura", "уверен", "уверена"})
# A label word followed by one of these comments on the number and names no event.
LABEL_COMMENT = frozenset({"is", "are", "was", "were", "seem", "seems", "look", "looks", "ist", "sind",
                           "est", "sont", "es", "son", "—", "있습니다", "입니다"})
# A short sentence that starts with one of these has a subject of its own ("The passing grade is 60%").
DETERMINERS = frozenset({"the", "a", "an", "its", "their", "his", "her", "this", "these", "those",
                         "le", "la", "les", "der", "die", "das", "el", "los", "las"})
# A step the reply announces after stating a value: "Then we'll subtract this probability
# from 1", "However, to get the desired probability ...", "but we're only interested in the
# probability that ...": the value before it is not the reply's answer (English).
STEP_SUBJECTS = frozenset({"we", "we'll", "we're", "i", "i'll", "let's", "you"})
STEP_ARITHMETIC = frozenset({"subtract", "multiply", "divide", "add", "square", "normalize"})
# Arithmetic a reply announces or works (stems; English): a cut-off "is 100" after one may be
# the start of "100/1000" or "100 - 15" (reader.truncation).
CALCULATION_STEMS = ("multipl", "divid", "subtract", "quotient", "minus")  # not "product": an event's noun
# Operators of a calculation written out ("(P of E) x 100%", "0.5 * 0.8", "= 0.4").
ARITHMETIC_SIGNS = frozenset({"x", "×", "*", "=", "÷"})
# "Next, we calculate the probability of ...": the value before it was a step on the way.
STEP_WORKING = frozenset({"calculate", "compute", "determine"})
# "Multiplying this probability by itself gives ...", at the start of a sentence.
STEP_GERUNDS = frozenset({"multiplying", "dividing", "subtracting", "squaring", "adding"})
STEP_GOALS = phrases("to get", "to find", "to calculate", "to determine", "to obtain", "to compute",
                     "interested in", "looking for", "is not the", "isn't the")
# A clause that starts after the head and before the number: "the probability of E, we need
# to calculate the number of X, which is 25%" (the number is X's).
NEW_CLAUSE_VERBS = frozenset({"need", "needs", "must", "can", "will", "should", "have", "has", "first",
                              "then", "calculate", "consider", "find", "use"})
# "The binomial probability is 0.725": a probability of a kind, not of the asked event.
NAMED_PROBABILITY = frozenset({"binomial", "conditional", "marginal", "joint", "prior", "base", "geometric",
                               "cumulative", "complementary", "unconditional", "individual"})
# "the probability of E ..., which is 6": the relative clause is about one of these.
QUANTITY_NOUNS = frozenset({"number", "numbers", "total", "ratio", "count", "sum", "amount", "size",
                            "average", "mean", "rate", "percentage", "proportion", "fraction", "margin"})
# "and" between two percentages: values considered together, like alternatives.
AND_WORDS = frozenset({"and", "und", "et", "y", "e", "и", "और", "و", "그리고", "和", "及", "と"})
# "X or Y": alternatives.
OR_WORDS = frozenset({"or", "oder", "ou", "o", "или", "либо", "या", "أو", "또는", "혹은", "或", "或者", "还是",
                      "か", "ないし"})
# "of" joins a head to its number only right after it ("a probability of 0.7"), never after
# an event ("a pool of 5%").
OF_LIKE = frozenset({"of", "de", "del", "du", "d'"})

# --------------------------------------------------------------------------- cues of the role rules (roles.py)

# role.money: a currency sign glued before the number, a currency code before it.
CURRENCY_SIGNS = "$€£¥₹₩₽"
CURRENCY_BEFORE = frozenset({"usd", "eur", "gbp", "rs", "inr"})
# role.ordinal-or-unit: a suffix glued to the number ("4th", "2e", "3ème", "10km", "5x").
GLUED_SUFFIXES = frozenset({"st", "nd", "rd", "th", "e", "er", "ème", "eme", "º", "s", "x", "k", "m", "km", "kg",
                            "g", "cm", "mm", "h", "min"})
# role.operand: words for "times" between factors ("(100/100) x", "0.5 times").
TIMES_WORDS = frozenset({"x", "times", "mal", "fois", "por", "умножить"})
# role.subtracted-from: "subtracting ... from 1".
SUBTRACT_STEMS = ("subtract", "deduct")
# role.product-operand: verbs of multiplying, by language (a word starting with one of these).
PRODUCT_STEMS_BY_LANGUAGE = {
    "en": ("multiply", "multiplying", "multiplied", "multiplication"),
    "fr": ("multipli",),                    # multiplier, multipliant, multiplié
    "de": ("multiplizier", "multipliziert"),
    "es": ("multiplic",),                   # multiplicar, multiplicando
    "ru": ("умнож",),                       # умножить, умножая, умножив
    "hi": ("गुणा",),
    "ar": ("ضرب", "بضرب"),
}
PRODUCT_STEMS = tuple(s for stems in PRODUCT_STEMS_BY_LANGUAGE.values() for s in stems)
CJK_PRODUCT = ("乘以", "相乘", "乘", "掛け", "かけ", "곱하", "곱해")  # zh, ja, ko
# Words that announce a result: after one, a number is no longer a factor ("... gives 0.3").
RESULT_WORDS = frozenset({"is", "are", "was", "equals", "gives", "give", "giving", "yields", "get", "gets",
                          "getting", "obtain", "results", "which", "so", "therefore", "thus", "hence",
                          "est", "donne", "ist", "ergibt", "es", "da", "resulta", "получаем", "равно", "равна",
                          "है", "يساوي", "هو", "是", "得", "は", "는", "은"})
# The interrogatives that, followed by punctuation, do not open a question ("Is," "was:").
AUXILIARY_INTERROGATIVES = frozenset({"was", "is", "will", "would", "can", "could", "should"})

# --------------------------------------------------------------------------- cues of the context and decision rules

# quantities: odds with a side, by language: the words between the two numbers, and the sides
# ("3 to 1 against", "3 contre 1 pour", "3 zu 1 dagegen", "3 a 1 en contra", "3 к 1 против").
ODDS_JOINERS_BY_LANGUAGE = {"en": ("to", ":"), "fr": ("contre",), "de": ("zu",), "es": ("a",), "ru": ("к",)}
ODDS_JOINERS = frozenset(w for ws in ODDS_JOINERS_BY_LANGUAGE.values() for w in ws)
ODDS_FOR_BY_LANGUAGE = {"en": ("in favor", "in favour", "for", "on"), "fr": ("pour", "en faveur"),
                        "de": ("dafür", "für"), "es": ("a favor", "en favor"), "ru": ("за",)}
ODDS_AGAINST_BY_LANGUAGE = {"en": ("against",), "fr": ("contre",), "de": ("dagegen", "gegen"),
                            "es": ("en contra", "contra"), "ru": ("против",)}
ODDS_FOR = tuple(w for ws in ODDS_FOR_BY_LANGUAGE.values() for w in ws)
ODDS_AGAINST = tuple(w for ws in ODDS_AGAINST_BY_LANGUAGE.values() for w in ws)
ODDS_WORDS = frozenset({"odds", "chances", "cote", "quote", "chancen", "probabilidades", "шансы", "шансов"})
# context.odds-restated: "3 to 1 against, so 75%", "which means", "meaning".
RESTATING = CONCLUSION | frozenset({"means", "meaning", "i.e", "namely", "soit", "also", "heißt", "decir",
                                    "означает", "то", "есть"})

# decide.undecided: the reply says it cannot choose between its numbers, by language.
CANNOT_DECIDE_BY_LANGUAGE = {
    "en": ("can't decide", "cannot decide", "can not decide", "couldn't decide", "unable to decide",
           "can't choose", "cannot choose", "torn between", "undecided between", "can't settle",
           "cannot settle", "can't pick", "cannot pick"),
    # (the lexer splits an elided article from its word: "n'arrive" is "n'" "arrive")
    "fr": ("n' arrive pas à choisir", "n' arrive pas à décider", "ne peux pas choisir", "ne peux pas décider",
           "ne sais pas choisir", "hésite entre", "ne parviens pas à choisir", "ne parviens pas à trancher"),
    "de": ("kann mich nicht entscheiden", "nicht entscheiden", "schwanke zwischen", "unentschlossen"),
    "es": ("no puedo decidir", "no puedo decidirme", "no me decido", "no logro decidir", "dudo entre",
           "indeciso entre", "indecisa entre"),
    "ru": ("не могу решить", "не могу выбрать", "не могу определиться", "колеблюсь между"),
    "hi": ("तय नहीं कर",),
    "ar": ("لا أستطيع أن أقرر", "لا أستطيع الاختيار", "لا أستطيع الحسم", "متردد بين"),
}
CANNOT_DECIDE = phrases(*(c for cs in CANNOT_DECIDE_BY_LANGUAGE.values() for c in cs))
CJK_CANNOT_DECIDE = ("决定不了", "无法决定", "拿不定", "难以决定", "決められない", "決めかねる", "迷って",
                     "결정할 수 없", "결정하지 못", "못 정하", "고민")

# decide.adopted-base-rate: a reply that adopts the question's base rate as its answer
# ("so I'll go with the base rate", "je retiens le taux de base"): a base-rate word and an
# adopting word in one sentence, by language.
BASE_RATE_BY_LANGUAGE = {
    "en": ("base", "baseline", "prior", "rate", "base-rate"),
    "fr": ("taux",), "de": ("basisrate", "grundrate", "ausgangsrate", "basisquote", "quote"),
    "es": ("tasa",), "ru": ("базовую", "базовая", "базовой", "частоту", "частота", "долю"),
    "hi": ("दर",), "ar": ("المعدل", "النسبة"),
}
BASE_RATE_WORDS = frozenset(w for ws in BASE_RATE_BY_LANGUAGE.values() for w in ws)
CJK_BASE_RATE = ("基础比率", "基准率", "基本比率", "基率", "基準率", "ベースレート", "基本確率", "기저율", "기본 비율", "기본비율")
ADOPT_BY_LANGUAGE = {
    "en": ("go with", "going with", "stick with", "sticking with", "stick to", "use", "using", "take",
           "taking", "adopt", "keep", "default to", "rely on", "anchor on", "answer with"),
    "fr": ("retiens", "garde", "prends", "utilise", "m' en tiens", "reste sur", "adopte"),
    "de": ("bleibe bei", "nehme", "übernehme", "verwende", "halte mich an"),
    "es": ("me quedo con", "uso", "tomo", "adopto", "mantengo", "me atengo a"),
    "ru": ("остановлюсь на", "беру", "возьму", "использую", "принимаю"),
    "hi": ("मानूँगा", "मानूंगा", "लूँगा", "लूंगा", "अपनाता"),
    "ar": ("سأعتمد", "أعتمد", "سآخذ", "آخذ", "أتبنى"),
}
ADOPT = phrases(*(a for adopts in ADOPT_BY_LANGUAGE.values() for a in adopts))
CJK_ADOPT = ("采用", "沿用", "按照", "就用", "採用", "そのまま", "を使", "그대로", "따르")

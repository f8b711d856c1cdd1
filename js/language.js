'use strict'

/**
 * Which language a text or a user is in, as far as choosing an embedder needs: the English
 * embedders (the built-in table, all-MiniLM-L6-v2) read Latin-script text and turn most other
 * letters into unknown tokens, so their vector of a Chinese request is noise that lowers the
 * word ranking it is fused with (docs/search-ranking.md, "Search in the user's language").
 */

/**
 * A text is ranked without an English embedder's vector when this share of its letters or more
 * is in another script than Latin: "帮我查一下北京天气 weather" is, "search github issues about
 * 内存泄漏" is not (its Latin words are what the English model can read).
 */
const NON_LATIN_SHARE = 0.3

/** Whether an English-only embedder can read `text`: most of its letters are Latin. */
function readableInEnglish(text) {
  let letters = 0
  let nonLatin = 0
  for (const match of text.matchAll(/\p{L}/gu)) {
    letters++
    if (!/\p{Script=Latin}/u.test(match[0])) nonLatin++
  }
  return letters === 0 || nonLatin / letters < NON_LATIN_SHARE
}

/** The user's language, from the process's locale (the OS's on a desktop): "zh", "en", … */
function userLanguage() {
  try {
    return new Intl.Locale(Intl.DateTimeFormat().resolvedOptions().locale).language
  } catch {
    return 'en'
  }
}

module.exports = { readableInEnglish, userLanguage }

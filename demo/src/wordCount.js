// Counts words in a text. Each CJK ideograph, kana or hangul syllable counts
// as one word, since those scripts do not separate words with spaces.
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;

export function wordCount(text) {
  let count = 0;
  for (const token of text.split(/\s+/u)) {
    if (token === '') continue;
    let latin = false;
    for (const ch of token) {
      if (CJK.test(ch)) {
        count += 1;
        if (latin) {
          count += 1;
          latin = false;
        }
      } else if (/[\p{L}\p{N}]/u.test(ch)) {
        latin = true;
      }
    }
    if (latin) count += 1;
  }
  return count;
}

// Package extract is the HTML extraction of the whole system: the crawler
// (package crawl) takes a fetched page's links, robots rules and text hash
// from it, and the parse observer everything it records about the page:
// title, visible text, description, language, outlinks with anchor text,
// rel=canonical, robots rules, and the content hash that duplicate
// clustering groups pages by. Both call [HTML] on the same bytes (the raw
// body, its Content-Type and X-Robots-Tag as stored in the table), so the
// links the frontier follows are the links the chain records, and a page's
// robots rules are the same for both.
//
// # Basics
//
// [HTML] is pure: no I/O, no shared state, safe for concurrent use. Every
// URL it returns (links, canonical) went through [webtable.Resolve], so it
// is absolute, normalized, and equal to the crawler's key for the same
// resource. [IsHTML] says whether a body is worth handing to [HTML].
//
// The page is scanned once with the html tokenizer rather than built into a
// tree: the tree builder (which goquery uses) refuses documents nested
// deeper than 512 elements and costs most of the parse time, while text and
// links need only the token stream plus a little state (inside an <a>,
// inside a <template>, inside <svg>). Script, style, noscript, iframe,
// noembed, noframes and title contents are raw text in the tokenizer and are
// dropped from Text; template contents are dropped from Text and Links.
//
// Robots rules come from <meta name=robots>, from <meta name=[Agent]> (the
// crawler's product token, "caffeine-crawler"), and from the X-Robots-Tag
// header, unprefixed or prefixed "caffeine-crawler:". Rules for other
// robots ("googlebot: noindex", <meta name=googlebot>) are ignored. The
// token is a constant, not the crawler's configured User-Agent: the parse
// observer reads a page long after its fetch and must reach the same
// verdict.
//
// # Limits
//
// A page cannot make the table store more than a bounded amount: Title is
// cut at [MaxTitleBytes], Description at [MaxDescriptionBytes], each anchor
// text at [MaxAnchorRunes] runes, always at a rune boundary and ending in
// [Ellipsis]; Links keeps the first [MaxLinks] targets, and links or a
// canonical longer than [MaxURLBytes] are dropped (a cut URL would name
// another page). Text is cut at Options.MaxTextBytes, unmarked: it is
// indexed, not shown whole.
//
// # Caveats
//
//   - Text follows token order, not the tree builder's: text misnested in a
//     table is not moved before the table, and an <a> left open runs until
//     the next <a> or </a> (its anchor text is cut at 200 runes anyway).
//   - Links come from <a href> and <area href> only: no frames, meta
//     refresh, Link headers or script-built links. Links that resolve to the
//     page itself (#fragments included) are left out, and so are
//     rel=nofollow, rel=ugc and rel=sponsored links.
//   - Charset: a byte-order mark wins, then the Content-Type charset, then
//     <meta charset> in the first 1024 bytes (golang.org/x/net/html/charset).
//     An undeclared or windows-1252 page (ISO-8859-1 is windows-1252 in
//     WHATWG terms) whose bytes are all valid UTF-8 is read as UTF-8, since
//     that is far more likely than Latin-1 text that happens to be valid
//     UTF-8. Invalid sequences become U+FFFD.
package extract

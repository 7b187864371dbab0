// Embedded fonts only: start decoding every face now, while the rest of the page is parsed, so the first
// layout already uses them. Left to CSS, a face loads only once a layout asks for it, and its arrival lays the
// whole page out a second time (Lighthouse counts that as blocking time on a phone). Nothing is fetched:
// the faces are data: URLs in the style sheet above.
document.fonts.forEach(function (face) { face.load().catch(function () {}); });

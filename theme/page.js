(function () {
  "use strict";
  // Enhancement only: with JS off every <details> still opens by hand and prints open.
  var doc = document;
  function openAround(element) {
    for (var node = element; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
  }
  function target(hash) {
    if (!hash || hash.length < 2) return null;
    try { return doc.getElementById(decodeURIComponent(hash.slice(1))); } catch (e) { return null; }
  }
  function reveal() {
    var element = target(location.hash);
    if (element) { openAround(element); element.scrollIntoView(); }
  }
  function setAll(open) {
    var all = doc.querySelectorAll("details");
    for (var i = 0; i < all.length; i++) all[i].open = open;
  }
  doc.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest('a[href^="#"]') : null;
    var element = link && target(link.getAttribute("href"));
    if (element) openAround(element);
  });
  addEventListener("hashchange", reveal);
  addEventListener("beforeprint", function () { setAll(true); });
  var bar = doc.getElementById("toolbar");
  if (bar) {
    bar.hidden = false;
    bar.addEventListener("click", function (event) {
      var mode = event.target.getAttribute && event.target.getAttribute("data-details");
      if (mode) setAll(mode === "open");
    });
  }
  reveal();
})();

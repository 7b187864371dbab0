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
    search(bar.querySelector("input"), bar.querySelector(".found"));
  }
  // Find in the report: every match in the page's text, closed accordions included; Enter goes to the next
  // one, opens its accordion and selects it.
  function search(input, status) {
    if (!input) return;
    var hits = [], at = -1, last = "";
    function find(query) {
      hits = []; at = -1;
      if (query.length < 2) return;
      var walker = doc.createTreeWalker(doc.querySelector("main"), NodeFilter.SHOW_TEXT), node;
      while ((node = walker.nextNode())) {
        var text = node.data.toLowerCase(), from = 0, index;
        while ((index = text.indexOf(query, from)) >= 0) {
          var range = doc.createRange();
          range.setStart(node, index); range.setEnd(node, index + query.length);
          hits.push(range); from = index + query.length;
        }
      }
    }
    function show() {
      status.textContent = last.length < 2 ? "" : hits.length ? (at + 1) + " of " + hits.length
        : "no match";
    }
    function next() {
      if (!hits.length) return show();
      at = (at + 1) % hits.length;
      var range = hits[at], element = range.startContainer.parentElement;
      openAround(element);
      element.scrollIntoView({ block: "center" });
      var selection = getSelection();
      selection.removeAllRanges(); selection.addRange(range);
      show();
    }
    input.addEventListener("input", function () {
      last = input.value.trim().toLowerCase(); find(last); show();
    });
    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); next(); }
    });
  }
  reveal();
})();

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
  // Find in the report: the text a reader sees as one string (phrases cross bold, links, code), closed
  // accordions included, excerpts skipped (their section holds the same words); Enter/Shift+Enter step.
  function search(input, status) {
    if (!input) return;
    var hits = [], at = -1, last = "", text = "", nodes = [], offsets = [];
    function index() {
      text = ""; nodes = []; offsets = [];
      var walker = doc.createTreeWalker(doc.querySelector("main"), NodeFilter.SHOW_TEXT, {
        acceptNode: function (node) {
          var parent = node.parentElement;
          return parent && parent.closest("script, style, .excerpt, .permalink, .toc")
            ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
        }
      }), node;
      while ((node = walker.nextNode())) {
        var data = node.data;
        for (var i = 0; i < data.length; i++) {
          var ch = data.charAt(i).toLowerCase();
          if (/\s/.test(ch)) {
            if (!text.length || text.charAt(text.length - 1) === " ") continue;
            ch = " ";
          }
          text += ch; nodes.push(node); offsets.push(i);
        }
      }
    }
    function find(query) {
      hits = []; at = -1;
      if (query.length < 2) return;
      if (!nodes.length) index();
      var from = 0, found;
      while ((found = text.indexOf(query, from)) >= 0) {
        var end = found + query.length - 1, range = doc.createRange();
        range.setStart(nodes[found], offsets[found]); range.setEnd(nodes[end], offsets[end] + 1);
        hits.push(range); from = found + query.length;
      }
    }
    function show() {
      status.textContent = last.length < 2 ? "" : !hits.length ? "no match"
        : at < 0 ? hits.length + (hits.length === 1 ? " match: press Enter to go to it" : " matches: press Enter to go to the first")
        : "match " + (at + 1) + " of " + hits.length;
    }
    function go(step) {
      if (!hits.length) return show();
      at = at < 0 ? (step > 0 ? 0 : hits.length - 1) : (at + step + hits.length) % hits.length;
      var range = hits[at], element = range.startContainer.parentElement;
      openAround(element);
      element.scrollIntoView({ block: "center" });
      var selection = getSelection();
      selection.removeAllRanges(); selection.addRange(range);
      show();
    }
    input.addEventListener("input", function () {
      last = input.value.replace(/\s+/g, " ").trim().toLowerCase(); find(last); show();
    });
    input.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); go(event.shiftKey ? -1 : 1); }
    });
  }
  // The wide screen's guide marks the section being read (aria-current); without JS it is a list of links.
  var guide = doc.querySelectorAll('#toc li a[href^="#"]'), ticking = false;
  function mark() {
    ticking = false;
    var current = null, line = innerHeight * 0.3;
    for (var i = 0; i < guide.length; i++) {
      var heading = target(guide[i].getAttribute("href"));
      if (heading && heading.getBoundingClientRect().top <= line) current = guide[i];
    }
    for (var j = 0; j < guide.length; j++) {
      if (guide[j] === current) guide[j].setAttribute("aria-current", "location");
      else guide[j].removeAttribute("aria-current");
    }
  }
  addEventListener("scroll", function () {
    if (!ticking) { ticking = true; requestAnimationFrame(mark); }
  }, { passive: true });
  // At the next frame, not now: measuring headings while the page is still being parsed would force a layout.
  requestAnimationFrame(mark);
  reveal();
})();

// Live refresh of the console's pages: while the tab is visible, the page
// is fetched again every data-refresh milliseconds and each element marked
// data-live is replaced by its fresh copy (when it changed). Polling stops
// while the tab is hidden and resumes, at once, when it is shown again.
(function () {
  "use strict";
  var every = Number(document.body.getAttribute("data-refresh"));
  var status = document.getElementById("live-status");
  if (!every || !status || !window.fetch || !window.DOMParser) {
    return;
  }
  var timer = null;
  var busy = false;

  function say(text) {
    status.textContent = text;
  }

  function schedule() {
    if (timer === null && !busy && !document.hidden) {
      timer = setTimeout(tick, every);
    }
  }

  function swap(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    document.querySelectorAll("[data-live]").forEach(function (el) {
      var next = fresh.getElementById(el.id);
      if (next && next.outerHTML !== el.outerHTML) {
        el.replaceWith(document.importNode(next, true));
      }
    });
    if (!fresh.body.hasAttribute("data-refresh")) {
      every = 0; // the page has nothing live left (a job that ended)
    }
  }

  function tick() {
    timer = null;
    if (document.hidden || busy) {
      return;
    }
    busy = true;
    fetch(window.location.href, { headers: { Accept: "text/html" }, cache: "no-store", credentials: "same-origin" })
      .then(function (resp) {
        if (!resp.ok) {
          throw new Error("HTTP " + resp.status);
        }
        return resp.text();
      })
      .then(function (html) {
        swap(html);
        say("Live: updated at " + new Date().toLocaleTimeString() + ".");
      })
      .catch(function (err) {
        say("Live refresh failed (" + err.message + "); trying again.");
      })
      .finally(function () {
        busy = false;
        if (every) {
          schedule();
        } else {
          say("The job has ended; nothing more to refresh.");
        }
      });
  }

  document.addEventListener("visibilitychange", function () {
    if (document.hidden) {
      if (timer !== null) {
        clearTimeout(timer);
        timer = null;
      }
      say("Live refresh paused while the tab is hidden.");
    } else if (every) {
      tick();
    }
  });
  say("Live: refreshing every " + every / 1000 + " s.");
  schedule();
})();

/* cpp_runtime: what a C++ program asks of the machine beyond C: static
 * constructors and destructors, exceptions thrown through several frames
 * (the unwinder reads .eh_frame and walks the stack), rethrow and nested
 * try blocks, virtual dispatch, RTTI (dynamic_cast, typeid), the standard
 * containers and algorithms, std::function, iostreams and std::string.
 * Everything printed depends only on the input, as in corpus.h's rule. */
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

namespace {

int constructed = 0;

struct Noisy {
    std::string name;
    explicit Noisy(std::string n) : name(std::move(n)) {
        ++constructed;
        std::cout << "construct " << name << "\n";
    }
    ~Noisy() { std::cout << "destroy " << name << "\n"; }
};

/* A static object: constructed before main, destroyed after it returns. */
Noisy global_noisy("global");

struct Shape {
    virtual ~Shape() = default;
    virtual double area() const = 0;
    virtual std::string kind() const { return "shape"; }
};

struct Rect : Shape {
    double w, h;
    Rect(double w_, double h_) : w(w_), h(h_) {}
    double area() const override { return w * h; }
    std::string kind() const override { return "rect"; }
};

struct Square final : Rect {
    explicit Square(double s) : Rect(s, s) {}
    std::string kind() const override { return "square"; }
};

struct Circle : Shape {
    double r;
    explicit Circle(double r_) : r(r_) {}
    double area() const override { return 3.0 * r * r; }
};

struct ParseError : std::runtime_error {
    int at;
    ParseError(const std::string &what, int where) : std::runtime_error(what), at(where) {}
};

/* Throws from a few frames down, with objects to destroy on the way. */
int parse_digit(const std::string &s, int i, int depth) {
    Noisy guard("frame" + std::to_string(depth));
    if (depth > 0)
        return parse_digit(s, i, depth - 1);
    if (i >= static_cast<int>(s.size()) || s[i] < '0' || s[i] > '9')
        throw ParseError("not a digit", i);
    return s[i] - '0';
}

int sum_digits(const std::string &s) {
    int total = 0;
    for (int i = 0; i < static_cast<int>(s.size()); i++) {
        try {
            total += parse_digit(s, i, 2);
        } catch (const ParseError &e) {
            std::cout << "caught " << e.what() << " at " << e.at << "\n";
            if (s[i] == '!')
                throw; /* rethrow to the caller */
        }
    }
    return total;
}

}  // namespace

int main(int argc, char **argv) {
    std::cout << "args " << argc << " first " << (argc > 1 ? argv[1] : "-") << "\n";

    /* Virtual dispatch and RTTI. */
    std::vector<std::unique_ptr<Shape>> shapes;
    shapes.push_back(std::make_unique<Rect>(2, 3));
    shapes.push_back(std::make_unique<Square>(4));
    shapes.push_back(std::make_unique<Circle>(1.5));
    for (const auto &s : shapes) {
        const Rect *r = dynamic_cast<const Rect *>(s.get());
        std::cout << s->kind() << " area " << s->area() << " is_rect " << (r != nullptr)
                  << " typeid_is_square " << (typeid(*s) == typeid(Square)) << "\n";
    }

    /* Exceptions through frames, caught, and rethrown. */
    std::cout << "sum " << sum_digits("12x4") << "\n";
    try {
        sum_digits("9!");
    } catch (const std::exception &e) {
        std::cout << "outer caught " << e.what() << "\n";
    }
    try {
        std::vector<int> v(3);
        (void)v.at(7);
    } catch (const std::out_of_range &) {
        std::cout << "out_of_range from at()\n";
    }

    /* Containers and algorithms. */
    std::vector<int> v(200);
    std::iota(v.begin(), v.end(), 1);
    std::vector<int> sq;
    std::transform(v.begin(), v.end(), std::back_inserter(sq), [](int x) { return (x * 37) % 101; });
    std::sort(sq.begin(), sq.end(), std::greater<int>());
    std::cout << "sorted head " << sq[0] << " " << sq[1] << " " << sq[2] << " tail " << sq.back() << "\n";
    std::map<std::string, int> words;
    std::unordered_map<int, int> lengths;
    std::istringstream text("the quick brown fox jumps over the lazy dog the end");
    for (std::string w; text >> w;) {
        ++words[w];
        ++lengths[static_cast<int>(w.size())];
    }
    for (const auto &[w, n] : words)
        std::cout << w << "=" << n << " ";
    std::cout << "\n";
    std::vector<std::pair<int, int>> by_length(lengths.begin(), lengths.end());
    std::sort(by_length.begin(), by_length.end());
    for (const auto &[len, n] : by_length)
        std::cout << "len" << len << "=" << n << " ";
    std::cout << "\n";

    /* std::function and captured state. */
    std::vector<std::function<int(int)>> ops;
    for (int k = 1; k <= 4; k++)
        ops.push_back([k](int x) { return x * k + k; });
    int acc = 1;
    for (const auto &f : ops)
        acc = f(acc);
    std::cout << "composed " << acc << "\n";

    /* Strings. */
    std::string s = "coprof";
    std::reverse(s.begin(), s.end());
    s += std::to_string(1234567890123LL);
    std::cout << s << " size " << s.size() << " find " << s.find("789") << "\n";

    {
        Noisy scoped("scoped");
        std::cout << "constructed so far " << constructed << "\n";
    }
    return 0;
}
